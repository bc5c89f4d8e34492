#!/usr/bin/env bash
# Builds Mesa's Vulkan driver for Mali CSF GPUs (panvk), and nothing else of Mesa, on Debian 12
# with only Debian's registry (docs/mesa.md):
#   - the source: the orig tarball of Debian's `mesa` source package, pinned version, fetched with
#     `apt-get source` through a deb-src entry for trixie (sources only, no trixie binaries);
#   - meson from bookworm-backports (bookworm's 1.0.1 is older than Mesa 25.0 needs), the other
#     build dependencies from bookworm; libvulkan-dev and vulkan-tools to run it;
#   - configure (Vulkan only, no LLVM, no window system) and build into a cached folder.
# Idempotent: a second run checks each step, does nothing and prints the ICD path.
# Prints each step with its duration, and last the ICD json to give the Vulkan loader
# (VK_ICD_FILENAMES).
#
# Environment:
#   UPANTHOR_MESA_DIR   the cached folder (default: build/mesa in the repository); holds
#                       dl/ (the downloaded source package), src/ (unpacked), build/ (meson)
#   UPANTHOR_JOBS       parallel compile jobs (default: nproc)
set -euo pipefail
cd "$(dirname "$0")/.."

mesa_version=25.0.7
mesa_debian_version=25.0.7-2+deb13u1
mesa_source_suite=trixie
meson_min=1.1.0

dir=${UPANTHOR_MESA_DIR:-$PWD/build/mesa}
jobs=${UPANTHOR_JOBS:-$(nproc)}
src=$dir/src
bld=$dir/build
icd=$bld/src/panfrost/vulkan/panfrost_devenv_icd.x86_64.json

# Mesa's configure imports python3-mako through the python3 it finds on PATH; a python3 earlier
# on PATH than Debian's (a pyenv shim, a venv) lacks it. Debian's directories go first.
export PATH=/usr/bin:/bin:/usr/sbin:/sbin:$PATH

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  as_root=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive

step_start=0
step() {
  step_start=$(date +%s.%N)
  echo "mesa: $*"
}
step_done() {
  local now
  now=$(date +%s.%N)
  awk -v m="$1" -v a="$now" -v b="$step_start" 'BEGIN { printf "mesa:   %s (%.1f s)\n", m, a - b }'
}

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

# The mirror and keyring this machine already uses for bookworm, so that the extra entries
# point at the same place.
# shellcheck disable=SC2016 # apt-get expands the $(FIELD)s
debian_uri() {
  apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(TARGET_OF)' 2>/dev/null |
    awk '$2 == "bookworm" && $3 == "deb" { print $1; exit }'
}

sources_file=/etc/apt/sources.list.d/upanthor-mesa.sources
ensure_sources() {
  if [ -f "$sources_file" ]; then
    return 1
  fi
  local uri keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  uri=$(debian_uri)
  if [ -z "$uri" ]; then
    echo "mesa: no bookworm entry in the apt sources; cannot derive the Debian mirror" >&2
    exit 1
  fi
  echo "mesa:   adding $sources_file (deb-src $mesa_source_suite, deb bookworm-backports) from $uri"
  "${as_root[@]}" tee "$sources_file" >/dev/null <<EOF
# Added by upanthor's scripts/mesa.sh: Mesa's source package (sources only, no binaries from
# $mesa_source_suite) and meson from bookworm-backports (installed only with -t).
Types: deb-src
URIs: $uri
Suites: $mesa_source_suite
Components: main
Signed-By: $keyring

Types: deb
URIs: $uri
Suites: bookworm-backports
Components: main
Signed-By: $keyring
EOF
  return 0
}

apt_updated=0
apt_update() {
  if [ $apt_updated -eq 0 ]; then
    "${as_root[@]}" apt-get update -qq
    apt_updated=1
  fi
}

meson_ok() {
  local v
  v=$(dpkg-query -W -f='${Version}' meson 2>/dev/null) || return 1
  installed meson && dpkg --compare-versions "$v" ge "$meson_min"
}

# 1. Packages.
step "packages"
packages=(
  # build
  gcc g++ ninja-build pkg-config python3 python3-mako python3-yaml python3-pycparser
  glslang-tools bison flex libexpat1-dev zlib1g-dev libzstd-dev libdrm-dev xz-utils
  # run and test
  libvulkan-dev vulkan-tools
)
missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done
if ensure_sources; then
  apt_updated=0
fi
if [ ${#missing[@]} -gt 0 ] || ! meson_ok; then
  apt_update
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "mesa:   installing ${missing[*]}"
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if ! meson_ok; then
  echo "mesa:   installing meson from bookworm-backports"
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends -t bookworm-backports meson \
    >/dev/null
fi
if ! meson_ok; then
  echo "mesa: meson >= $meson_min is not installed" >&2
  exit 1
fi
step_done "meson $(meson --version), python3 $(/usr/bin/python3 --version | cut -d' ' -f2)"

# 2. Source.
step "source mesa $mesa_version"
if [ -f "$src/VERSION" ] && [ "$(cat "$src/VERSION")" = "$mesa_version" ]; then
  step_done "up to date ($src)"
else
  mkdir -p "$dir/dl"
  tarball=$dir/dl/mesa_$mesa_version.orig.tar.xz
  if [ ! -f "$tarball" ]; then
    apt_update
    # As root, apt hands downloads to its sandbox user `_apt`, which cannot write here.
    sandbox=()
    if [ "$(id -u)" -eq 0 ]; then
      sandbox=(-o APT::Sandbox::User=root)
    fi
    (cd "$dir/dl" && apt-get source -qq "${sandbox[@]}" --download-only "mesa=$mesa_debian_version")
  fi
  rm -rf "$src.tmp"
  mkdir -p "$src.tmp"
  tar -xf "$tarball" -C "$src.tmp" --strip-components=1
  rm -rf "$src"
  mv "$src.tmp" "$src"
  step_done "unpacked $(basename "$tarball") into $src"
fi

# 3. Configure. A change of options (this script) reconfigures from scratch.
options=(
  -Dvulkan-drivers=panfrost -Dgallium-drivers=
  -Dplatforms= -Dglx=disabled -Degl=disabled -Dgbm=disabled -Dopengl=false
  -Dgles1=disabled -Dgles2=disabled
  -Dllvm=disabled -Dvideo-codecs= -Dvalgrind=disabled -Dlibunwind=disabled
  # -O1 without debug info or assertions (release's other settings): the tests spend their time
  # in the driver and the mock, not in panvk, and -O1 compiles in about two thirds of -O3's time
  # (a sample of 25 of Mesa's files: 9.4 s at -O3, 6.1 s at -O1; issue #35, CI time).
  -Doptimization=1 -Ddebug=false -Db_ndebug=true
)
stamp=$bld/.upanthor-options
step "configure"
if [ -f "$bld/build.ninja" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${options[*]}" ]; then
  step_done "up to date ($bld)"
else
  rm -rf "$bld"
  if command -v ccache >/dev/null; then
    echo "mesa:   ccache found; meson uses it"
  fi
  meson setup "$bld" "$src" "${options[@]}" >"$dir/configure.log" 2>&1 || {
    tail -n 30 "$dir/configure.log" >&2
    echo "mesa: configure failed; full log: $dir/configure.log" >&2
    exit 1
  }
  echo "${options[*]}" >"$stamp"
  step_done "configured (log: $dir/configure.log)"
fi

# 4. Build. Mesa regenerates src/git_sha1.h on every run (a step that changes nothing when the
# source is not a git checkout); only the other steps count as work.
step "build"
ninja -C "$bld" -j "$jobs" >"$dir/build.log.new" 2>&1 || {
  tail -n 30 "$dir/build.log.new" >&2
  echo "mesa: build failed; full log: $dir/build.log.new" >&2
  exit 1
}
built=$(grep '^\[' "$dir/build.log.new" | grep -vc 'git_sha1\.h' || true)
if [ "$built" -eq 0 ]; then
  rm -f "$dir/build.log.new"
  step_done "up to date"
else
  mv "$dir/build.log.new" "$dir/build.log"
  step_done "built $built steps (log: $dir/build.log)"
fi

if [ ! -f "$icd" ]; then
  echo "mesa: the build did not produce $icd" >&2
  exit 1
fi
echo "mesa: ICD $icd"

# Sourced by scripts/fuzz.sh and scripts/fuzz-campaign.sh: reads a target's options file, the
# format OSS-Fuzz reads too: the [libfuzzer] section's flags (max_len, timeout, rss_limit_mb, ...)
# and the [asan] section's ASAN_OPTIONS.
#
#   read_fuzz_options FILE    sets fuzz_opts (array of -key=value) and fuzz_asan_opts (a:b:c)
read_fuzz_options() {
  local k v section=""
  fuzz_opts=()
  fuzz_asan_opts=""
  while IFS='=' read -r k v; do
    k=$(echo "$k" | tr -d ' '); v=$(echo "$v" | tr -d ' ')
    case "$k" in "["*"]") section="$k"; continue ;; "#"*|"") continue ;; esac
    [ -n "$v" ] || continue
    if [ "$section" = "[asan]" ]; then
      fuzz_asan_opts="${fuzz_asan_opts:+$fuzz_asan_opts:}$k=$v"
    else
      fuzz_opts+=("-$k=$v")
    fi
  done < "$1"
}

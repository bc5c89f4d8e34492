# Sourced by scripts/fuzz.sh and scripts/fuzz-campaign.sh: fuzz_ioctl's device history files
# (fuzz/world_history.h) are mapped at a fixed size and mostly zeros; the header says how many
# bytes are in use.

# trim_world_history SRC DST: copies the bytes in use of the history SRC to DST.
trim_world_history() {
  local used
  used=$(od -An -tu4 -j12 -N4 "$1" | tr -d ' ')
  head -c "${used:-0}" "$1" >"$2"
}

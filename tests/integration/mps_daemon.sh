# Sourced by run_mps.sh and run_peer_death.sh: a private MPS daemon for one run of processes
# sharing GPU 0.
#
#   start_private_mps NAME OUTDIR
#
# Reports "NAME: SKIPPED: ..." and exits the calling script with 0 without root, without
# nvidia-cuda-mps-control or without a GPU; exits it with 1 when the daemon does not start.
# Otherwise sets $tmp (a scratch directory, removed at exit), exports the daemon's pipe and log
# directories (logs under OUTDIR/mps_log) and stops the daemon when the script exits.

# shellcheck disable=SC2317  # run by the EXIT trap
stop_private_mps() {
  echo quit | nvidia-cuda-mps-control > /dev/null 2>&1
  rm -rf -- "$tmp"
}

start_private_mps() {
  local name=$1 out=$2
  if [[ $(id -u) -ne 0 ]]; then
    echo "$name: SKIPPED: starting an MPS daemon needs root"
    exit 0
  fi
  if ! command -v nvidia-cuda-mps-control > /dev/null; then
    echo "$name: SKIPPED: nvidia-cuda-mps-control not found"
    exit 0
  fi
  if ! nvidia-smi -L > /dev/null 2>&1; then
    echo "$name: SKIPPED: no NVIDIA GPU visible"
    exit 0
  fi
  tmp=$(mktemp -d)
  # The daemon and its clients find each other through these directories: a private pair keeps
  # this run apart from any MPS daemon already on the machine.
  export CUDA_MPS_PIPE_DIRECTORY=$tmp/pipe
  export CUDA_MPS_LOG_DIRECTORY=$out/mps_log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  # Each MPS client owns its hardware queues, so an inherited CUDA_DEVICE_MAX_CONNECTIONS=32
  # (what the threaded benchmarks want) leaves the server too few for 4 clients: on an H100
  # (2026-12-06) two of four processes failed with "CUDA device 0 cannot be used" and the
  # others waited for them; with CUDA's default all passed. One rank per process needs no more
  # queues than that.
  unset CUDA_DEVICE_MAX_CONNECTIONS
  trap stop_private_mps EXIT
  trap 'exit 130' INT TERM
  if ! nvidia-cuda-mps-control -d; then
    echo "$name: FAIL: could not start the MPS control daemon"
    exit 1
  fi
  echo "MPS control daemon started (pipes: $CUDA_MPS_PIPE_DIRECTORY, logs: $CUDA_MPS_LOG_DIRECTORY)"
}

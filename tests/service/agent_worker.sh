#!/bin/sh
# A worker for the node-agent tests (CPU only, no Python): STEPS steps of SLEEP seconds, the step
# counter in $ASTRAEUS_PROGRESS_FILE (write + rename), resumes from its checkpoint in
# $ASTRAEUS_CHECKPOINT_DIR, saves a checkpoint and exits 0 on SIGTERM (the checkpoint signal).
# A helper process (`sleep 600`) stays in its process group, as a data loader would: the tests
# check that nothing of a worker outlives its attempt. Prints the lines the tests grep.
# Usage: agent_worker.sh STEPS SLEEP [EXIT_CODE_OF_WORKER_1 [CHECKPOINT_S]]
# (CHECKPOINT_S: seconds the checkpoint takes on SIGTERM, default 0; an empty exit code: none.)
steps=$1; pause=$2; fail_code=${3:-}; ckpt_s=${4:-0}
ckpt="$ASTRAEUS_CHECKPOINT_DIR/rank$RANK"
step=0
if [ -f "$ckpt" ]; then step=$(cat "$ckpt"); echo "resumed from step $step"; fi
echo "rank $RANK world $WORLD_SIZE master $MASTER_ADDR:$MASTER_PORT gpus $CUDA_VISIBLE_DEVICES local_rank $LOCAL_RANK node_rank $NODE_RANK attempt $ASTRAEUS_ATTEMPT"
sleep 600 &
helper=$!
echo "helper $helper pgid $(sed "s/.*) //" /proc/$$/stat | cut -d" " -f3)"
trap 'sleep "$ckpt_s"; echo "$step" > "$ckpt.tmp"; mv "$ckpt.tmp" "$ckpt"; echo "checkpoint saved at step $step"; kill $helper; exit 0' TERM
if [ -n "$fail_code" ] && [ "$RANK" = 1 ]; then sleep "$pause"; kill $helper; exit "$fail_code"; fi
while [ "$step" -lt "$steps" ]; do
  sleep "$pause" &
  wait $!
  step=$((step + 1))
  echo "$step" > "$ASTRAEUS_PROGRESS_FILE.tmp" && mv "$ASTRAEUS_PROGRESS_FILE.tmp" "$ASTRAEUS_PROGRESS_FILE"
done
kill $helper
echo "done at step $step"
exit 0

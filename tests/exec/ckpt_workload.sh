#!/bin/sh
# A small checkpointing workload for the executor tests (the worker contract of docs/agents.md):
# STEPS steps of SLEEP seconds; the step counter in $ASTRAEUS_PROGRESS_FILE (tmp + rename); on
# SIGTERM it saves the step into $ASTRAEUS_CHECKPOINT_DIR/step-$RANK and exits 0; it resumes
# from there. usage: ckpt_workload.sh STEPS SLEEP [FAIL_RANK [FAIL_ATTEMPT]]: worker FAIL_RANK
# exits 1 at its second step (of attempt FAIL_ATTEMPT only, when given). $CKPT_DELAY_S (default
# 0): seconds the checkpoint takes on SIGTERM (a wind-down that lasts).
steps=$1; sleep_s=$2; fail_rank=${3:--1}; fail_attempt=${4:-$ASTRAEUS_ATTEMPT}
first=1
ck="$ASTRAEUS_CHECKPOINT_DIR/step-$RANK"
step=0
if [ -f "$ck" ]; then step=$(cat "$ck"); echo "resumed from step $step"; fi
echo "rank $RANK world $WORLD_SIZE master $MASTER_ADDR:$MASTER_PORT local $LOCAL_RANK node $NODE_RANK gpus $CUDA_VISIBLE_DEVICES attempt $ASTRAEUS_ATTEMPT run $ASTRAEUS_RUN workspace $ASTRAEUS_WORKSPACE workers $ASTRAEUS_WORKERS"
trap 'sleep "${CKPT_DELAY_S:-0}"; echo "$step" > "$ck.tmp" && mv "$ck.tmp" "$ck"; echo "checkpoint saved at step $step"; exit 0' TERM
while [ "$step" -lt "$steps" ]; do
  step=$((step + 1))
  echo "$step" > "$ASTRAEUS_PROGRESS_FILE.tmp" && mv "$ASTRAEUS_PROGRESS_FILE.tmp" "$ASTRAEUS_PROGRESS_FILE"
  if [ "$RANK" = "$fail_rank" ] && [ "$ASTRAEUS_ATTEMPT" = "$fail_attempt" ] && [ "$first" = 0 ]; then
    echo "failing on purpose"; exit 1
  fi
  first=0
  sleep "$sleep_s" &
  wait $!
done
echo "finished at step $step"

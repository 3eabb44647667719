#!/usr/bin/env bash
# zoo:strong-2p, one 2-player network distilled from an ensemble of six, in one command
# (agents/zoo/README.md has its model card, lab/results/zoo-history.md its full record,
# lab/results/distill-2p.md the study):
#
#   bash lab/recipes/strong-2p.sh [RUNS]          (default RUNS=runs; DRY_RUN=1 prints the commands)
#
# About 8 hours on 2 cores: the distillation's eight rounds (configs/distill-2p-long.yaml, about
# 3.5 hours), two collections of the 256-world teacher's labels on round 5's games (about 2.5
# hours), four more fits of those labels (about 1 hour), the ensemble of six (int8 weights,
# lab/zoo/strong-2p-ensemble.pt), then one network fitted to the ensemble's policy on the states of
# its own games and of its student's (about 45 minutes). Every step is skipped when its output
# exists, and a stopped collection resumes: run the same command again. The collections are
# time-budgeted (the distillation) or seeded by shard (the 256-world ones), so a rerun gives
# networks of this recipe, not these bits.
set -euo pipefail
RUNS=${1:-runs}
R=$RUNS/distill-2p-long  # configs/distill-2p-long.yaml's run
OUT=$RUNS/strong-2p
run() { if [ -n "${DRY_RUN:-}" ]; then echo "$*"; else "$@"; fi; }
CF=${CHICKENFOOT:-chickenfoot}

# 1. The distillation's rounds 0-7 (rounds 5 and 7 are members; every round's labels feed the fits).
if [ ! -f "$R/round-7.pt" ]; then
  if [ -f "$R/summary.json" ] || [ -d "$R/labels" ]; then resume=(--resume); else resume=(); fi
  run "$CF" distill --config configs/distill-2p-long.yaml --runs-dir "$RUNS" --dagger-rounds 7 "${resume[@]}"
fi
ROUNDS=("$R"/labels-dagger-{1..7} "$R/labels")  # the held-out shards are the first collection's

# 2. The 256-world teacher's labels of round 5's games (two collections; the second is held out).
TEACHER="search:ms=0:sims=256:race=2"
for spec in "s256 461 240" "s256b 4620 86"; do
  read -r name seed shards <<< "$spec"
  run "$CF" labels collect --out "$RUNS/labels-2p-$name" --players 2 --teacher "$TEACHER" \
    --student "$R/round-5.pt" --opponents heuristic --shard-games 8 --slots 8 --seed "$seed" \
    --shards "$shards" --workers 2 --no-progress
done

# 3. Four fits, each from the heuristic's warm start (the run's fit, changing what the names say).
fit() {  # fit OUT EPOCHS TEMPERATURE HIDDEN TRUNK FOLDERS...
  local out=$1 epochs=$2 temperature=$3 hidden=$4 trunk=$5
  shift 5
  [ -f "$out" ] || run "$CF" labels fit "$@" --out "$out" --holdout 0.05 --imitate heuristic \
    --imitation-games 800 --imitation-epochs 4 --temperature "$temperature" --epochs "$epochs" \
    --learning-rate 1e-3 --hidden "$hidden" --trunk "$trunk" --torch-threads 2 --deal-sets 0 --no-progress
}
fit "$OUT/t0.1.pt" 8 0.1 256,256 tanh "${ROUNDS[@]}"
fit "$OUT/tanh512x2.pt" 8 0.03 512,512 tanh "${ROUNDS[@]}"
fit "$OUT/ln512x3.pt" 8 0.03 512,512,512 layernorm "${ROUNDS[@]}"
fit "$OUT/ln1024x2.pt" 6 0.03 1024,1024 layernorm "${ROUNDS[@]}" "$RUNS/labels-2p-s256" "$RUNS/labels-2p-s256b"

# 4. The ensemble: the mean of the six networks' log-probabilities, its weights stored in int8
#    (3.4 MB; float32's 13 MB played as strong, lab/results/distill-2p.md). It was zoo:strong-2p
#    before step 5's network; it is lab/zoo/strong-2p-ensemble.pt.
[ -f "$OUT/ensemble.pt" ] || run "$CF" ensemble "$OUT/ln1024x2.pt" "$OUT/ln512x3.pt" "$R/round-5.pt" \
  "$OUT/t0.1.pt" "$OUT/tanh512x2.pt" "$R/round-7.pt" --precision int8 --out "$OUT/ensemble.pt"

# 5. One network of the ensemble's policy (DAgger with the ensemble as the expert, no search): the
#    ensemble plays 13,000 games against heuristic and zoo:strong-2p-545k (a quarter of the other
#    seats itself), its 1024x1024 member is fitted to its policy on those 2.45M states; that network
#    plays 13,000 more games and is fitted again on both sets; float16 weights (3.0 MB).
PY=${PYTHON:-python}
play() {  # play PLAYER SEED OUT
  [ -f "$3" ] || run "$PY" -m lab.policy_distill play --player "$1" --opponents heuristic zoo:strong-2p-545k \
    --games 13000 --seed "$2" --torch-threads 2 --no-progress --out "$3"
}
play "$OUT/ensemble.pt" 100 "$OUT/states-ensemble.npz"
[ -f "$OUT/kd-1.pt" ] || run "$PY" -m lab.policy_distill --teacher "$OUT/ensemble.pt" --init teacher:0 \
  --states "$OUT/states-ensemble.npz" --out "$OUT/kd-1.pt" --hidden 1024,1024 --trunk layernorm \
  --epochs 3 --learning-rate 3e-4 --holdout 0.02 --torch-threads 2
play "$OUT/kd-1.pt" 200 "$OUT/states-kd-1.npz"
run "$PY" -m lab.policy_distill --teacher "$OUT/ensemble.pt" --init "$OUT/kd-1.pt" \
  --states "$OUT/states-ensemble.npz" "$OUT/states-kd-1.npz" --out "$OUT/strong-2p.pt" --hidden 1024,1024 \
  --trunk layernorm --epochs 2 --learning-rate 2e-4 --holdout 0.02 --torch-threads 2 --precision float16

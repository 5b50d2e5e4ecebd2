#!/usr/bin/env bash
# Runs the `partsim batch` command of each CI example (examples/ci/*.yml) on the shipped scenarios, as the example's
# job would: the examples stay true, and every shipped scenario meets its `/expect` (partsim's own CI runs this).
# Usage: ci_examples_test.sh PARTSIM_BINARY SOURCE_DIR
set -euo pipefail
partsim_bin=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ln -s "$source_dir/scenarios" "$work/scenarios"
mkdir "$work/bin"
ln -s "$partsim_bin" "$work/bin/partsim"

commands=()
for example in "$source_dir"/examples/ci/*.yml; do
  # The line that runs the batch: a YAML `run:` value or a list item of `script:`.
  line=$(sed -n -E 's/^[[:space:]]*(- |run: )(partsim batch .*)$/\2/p' "$example")
  if [ -z "$line" ]; then
    echo "FAIL: $example has no 'partsim batch' command" >&2
    exit 1
  fi
  commands+=("$line")
done
[ ${#commands[@]} -ge 2 ] || { echo "FAIL: expected the GitHub Actions and GitLab CI examples" >&2; exit 1; }

scenarios=$(ls "$source_dir"/scenarios/*.json | wc -l)
mapfile -t distinct < <(printf '%s\n' "${commands[@]}" | sort -u)
for command in "${distinct[@]}"; do
  echo "running: $command"
  rm -rf "$work/partsim-batch"
  (cd "$work" && PATH="$work/bin:$PATH" bash -c "$command")
  for f in junit.xml summary.md summary.json; do
    [ -s "$work/partsim-batch/$f" ] || { echo "FAIL: the batch wrote no $f" >&2; exit 1; }
  done
  grep -q "^$scenarios scenarios: $scenarios passed, 0 failed, 0 errors.$" "$work/partsim-batch/summary.md" || {
    echo "FAIL: expected all $scenarios shipped scenarios to pass:" >&2
    cat "$work/partsim-batch/summary.md" >&2
    exit 1
  }
done
# Every shipped scenario carries expectations: the README's figures cannot drift unnoticed.
without=$(grep -L '"expect"' "$source_dir"/scenarios/*.json || true)
[ -z "$without" ] || { echo "FAIL: shipped scenarios without /expect: $without" >&2; exit 1; }
echo "ok: ${#commands[@]} examples, $scenarios scenarios passed"

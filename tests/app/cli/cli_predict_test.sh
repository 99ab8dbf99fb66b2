#!/usr/bin/env bash
# tunebench-cli predict / accuracy / probe end to end. Usage: $0 CLI SESSIONS_DIR [WORKER]
set -euo pipefail
cli="$1"
sessions="$2"
worker="${3:-}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The forum's case: 7B DDP on two RTX 4090s without peer-to-peer does not fit; 1B FSDP does.
out="$("$cli" predict --preset 7b-ddp --gpu rtx4090 --gpus 2 --link pcie4-nop2p)"
grep -q "does not fit" <<<"$out" || fail "7B on 4090s: $out"
grep -q "communication floor" <<<"$out" || fail "no floor: $out"
out="$("$cli" predict --preset 7b-fsdp --set model=1b --set checkpointing=true --gpu rtx4090 --gpus 2 --json)"
grep -q '"fit": "fits"' <<<"$out" || fail "1B FSDP on 4090s: $out"
grep -q '"can_beat_single"' <<<"$out" || fail "no scaling verdict: $out"

# A CPU preset is predicted against this host's memory, which its ranks share, with a verdict
# (the GUI's Prediction dock prints the same line).
out="$("$cli" predict --preset cpu-tiny-ddp)"
grep -q "Memory per rank: .* x 2 ranks = .* on this host: fits" <<<"$out" || fail "cpu-tiny-ddp: $out"

# Calibrated from the recorded H200 session: the basis says so.
out="$("$cli" predict --preset 7b-ddp --evidence "$sessions/h200-7b.tbsession" 2>/dev/null)"
grep -q "calibrated on NVIDIA H200" <<<"$out" || fail "not calibrated: $out"
grep -q "measured in trials over this link" <<<"$out" || fail "link not from the session: $out"
# A trial its owner keeps out (the window's Trial > Use for predictions, unticked: the tag
# "no-calibration") calibrates nothing here either, and the notes say so.
cp "$sessions/h200-7b.tbsession" "$dir/kept.tbsession"
chmod u+w "$dir/kept.tbsession"
sqlite3 "$dir/kept.tbsession" "INSERT INTO trial_tags (trial_id, tag) SELECT id, 'no-calibration' FROM trials WHERE id = 1"
"$cli" predict --preset 7b-ddp --evidence "$dir/kept.tbsession" > "$dir/out" 2> "$dir/err" || fail "predict kept: $(cat "$dir/err")"
grep -q "w-7b-single: not used: kept out of predictions" "$dir/err" || fail "kept-out note: $(cat "$dir/err")"

# A Hugging Face config.json: Llama-3.1-8B's shape is the llama3.1-8b preset, its rope_scaling is
# named in a warning; a file that is no model config is refused with the problem.
cat > "$dir/config.json" <<'JSON'
{"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
 "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256, "rope_theta": 500000.0,
 "tie_word_embeddings": false, "rope_scaling": {"rope_type": "llama3", "factor": 8.0}}
JSON
out="$("$cli" predict --preset 7b-single --hf-config "$dir/config.json" --gpu h200 --json 2>"$dir/err")"
grep -q '"model": "llama3.1-8b"' <<<"$out" || fail "hf-config model: $out"
grep -q '"kv_heads": 8' <<<"$out" || fail "hf-config kv_heads: $out"
grep -q "rope_scaling (llama3)" "$dir/err" || fail "hf-config warning: $(cat "$dir/err")"
echo '{"model": "7b", "strategy": "ddp"}' > "$dir/trial.json"
if out="$("$cli" predict --hf-config "$dir/trial.json" --gpu h200 2>&1)"; then fail "accepted a trial config as a model config"; fi
grep -q "not a Hugging Face model config" <<<"$out" || fail "hf-config error: $out"

out="$("$cli" predict --list-hardware)"
grep -q "^  rtx4090 " <<<"$out" || fail "list-hardware: $out"
if out="$("$cli" predict --preset 7b-single --gpu gtx1080 2>&1)"; then fail "accepted an unknown GPU"; fi
grep -q "unknown GPU 'gtx1080'" <<<"$out" || fail "unknown GPU: $out"

out="$("$cli" accuracy "$sessions/h200-7b.tbsession")"
grep -q "| memory | w-7b-ddp-ckpt | model only |" <<<"$out" || fail "accuracy table: $out"
grep -q "| from single | w-7b-fsdp-full |" <<<"$out" || fail "accuracy table: $out"

# A link probe between two CPU ranks (Gloo), stored in a new session.
if [ -n "$worker" ]; then
  out="$("$cli" probe --gpus 2 --device cpu --min-mb 0.25 --max-mb 0.5 --worker "$worker" --session "$dir/p.tbsession" 2>&1)"
  grep -q "stored as trial 1" <<<"$out" || fail "probe: $out"
  [ "$(grep -c '^ *[0-9]\+ \+[0-9.]\+ \+[0-9.]\+ \+[0-9.]\+$' <<<"$out")" -eq 2 ] || fail "probe points: $out"
  out="$("$cli" list "$dir/p.tbsession")"
  grep -q "link probe, 2 x cpu" <<<"$out" || fail "probe trial not listed: $out"
  # Without a session: the points are printed, nothing is kept.
  out="$("$cli" probe --gpus 2 --device cpu --min-mb 0.25 --max-mb 0.25 --worker "$worker" 2>&1)"
  [ "$(grep -c '^ *[0-9]\+ \+[0-9.]\+ \+[0-9.]\+ \+[0-9.]\+$' <<<"$out")" -eq 1 ] || fail "probe points: $out"
  grep -q "stored as" <<<"$out" && fail "a probe without --session was stored: $out"
  # A missing worker is a sentence, not a crash.
  out="$("$cli" probe --gpus 2 --device cpu --max-mb 1 --worker /nonexistent/tunebench-worker 2>&1)" &&
    fail "a missing worker succeeded: $out"
  grep -q "^tunebench-cli: rank 0 could not start /nonexistent/tunebench-worker" <<<"$out" || fail "missing worker: $out"
fi
echo "cli predict test passed"

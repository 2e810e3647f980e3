# Sourced by the benchmarks (needs $work, a root-owned folder under /tmp: the policy must be root's
# alone). Writes the managed policy for a local catalog and a lookup that reaches nothing
# (benchmarks talk only to 127.0.0.1) and keeps the gate's state inside $work.
#
# Pointing the lookup at 127.0.0.1 loosens the product profile, which a policy may do only when
# signed by a key the profile trusts: the policy is signed with the tests' key
# (Fixtures/keys/test-policy.key), which only debug builds and the benchmarks' release build
# (bench_build: -DMAPGATE_BENCHMARK) trust. The Debian package's binary trusts no such key.
#
# bench_policy [JSON_FIELDS]: the policy with these catalog fields (default: an unsigned catalog).
bench_policy() {
  local fields=${1:-'"requireSignedCatalog": false'}
  cat > "$work/policy.json" <<POLICY
{ "lookupURL": "http://127.0.0.1:1/lookup", "allowInsecureLookup": true, $fields }
POLICY
  chmod 644 "$work/policy.json"
  rm -f "$work/policy.json.minisig"
  minisign -S -s "$PWD/Fixtures/keys/test-policy.key" -m "$work/policy.json" -x "$work/policy.json.minisig" >/dev/null
}

# bench_build: the release build as scripts/package makes it, plus MAPGATE_BENCHMARK; sets $mapgate.
# MAPGATE_BINARY=path measures another binary instead (another revision's bench_build).
bench_build() {
  if [ -n "${MAPGATE_BINARY:-}" ]; then mapgate=$MAPGATE_BINARY; return; fi
  swift build -c release --static-swift-stdlib --product mapgate -Xswiftc -DMAPGATE_BENCHMARK --scratch-path .build/bench >/dev/null
  mapgate=$PWD/.build/bench/release/mapgate
}

bench_policy
export MAPGATE_POLICY="$work/policy.json" XDG_STATE_HOME="$work/state"

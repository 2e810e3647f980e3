# Sourced by the benchmarks: a managed policy for a local, unsigned catalog and a lookup that
# reaches nothing (benchmarks talk only to 127.0.0.1), and the gate's state inside $work.
# Needs $work (a root-owned folder under /tmp: the policy must be root's alone).
cat > "$work/policy.json" <<POLICY
{ "lookupURL": "http://127.0.0.1:1/lookup", "allowInsecureLookup": true, "requireSignedCatalog": false }
POLICY
chmod 644 "$work/policy.json"
export MAPGATE_POLICY="$work/policy.json" XDG_STATE_HOME="$work/state"

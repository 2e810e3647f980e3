# Sourced by the benchmarks: a managed policy for a local, unsigned catalog (benchmarks talk only
# to 127.0.0.1), and the gate's state inside $work. The policy names no lookup: a release build
# refuses an unsigned policy that loosens the product's rules (another lookup URL does), and the
# default lookup, which this machine cannot reach, costs a benchmark nothing.
# Needs $work (a root-owned folder under /tmp: the policy must be root's alone).
cat > "$work/policy.json" <<POLICY
{ "requireSignedCatalog": false }
POLICY
chmod 644 "$work/policy.json"
export MAPGATE_POLICY="$work/policy.json" XDG_STATE_HOME="$work/state"

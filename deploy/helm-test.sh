#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The Helm chart deploy/helm/weir, rendered in both shapes (one replica on
# SQLite, deploy/helm/weir/ci/ha-values.yaml's replicas on PostgreSQL and
# Redis) with helm lint and helm template, validated offline with
# kubeconform against the Kubernetes schemas, and each rendered weir.yaml
# checked with weir check-config. Shapes the chart must refuse are refused.
#
# Every tool comes pinned from the Go module proxy (go run caches it); the
# schemas are made from modules too, so nothing else is downloaded:
#   - the Kubernetes kinds from k8s.io/kubernetes's OpenAPI document
#     (deploy/k8s-schemas.py);
#   - ServiceMonitor from prometheus-operator's CRD, converted by the
#     openapi2jsonschema.py that kubeconform ships.
set -euo pipefail

HELM=helm.sh/helm/v3/cmd/helm@v3.22.0
KUBECONFORM=github.com/yannh/kubeconform/cmd/kubeconform@v0.8.0
K8S=k8s.io/kubernetes@v1.34.2
PROMOP=github.com/prometheus-operator/prometheus-operator@v0.85.0

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
CHART=deploy/helm/weir
die() {
	printf 'FATAL: helm-test: %s\n' "$*" >&2
	exit 1
}
if ! python3 -c 'import yaml' 2>/dev/null; then
	[ "${CI:-}" = "true" ] || die "python3 with PyYAML is missing (apt-get install -y python3-yaml, or run with CI=true)"
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-yaml
	python3 -c 'import yaml' || die "PyYAML is still missing"
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/weir-helm.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
helm() { go run "$HELM" "$@"; }
moddir() { (cd "$TMP" && go mod download -json "$1") | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["Dir"]) if "Dir" in d else sys.exit(d.get("Error"))'; }

started=$SECONDS
echo "==> schemas from $K8S and $PROMOP"
python3 deploy/k8s-schemas.py "$(moddir "$K8S")/api/openapi-spec/swagger.json" "$TMP/schemas"
kc_dir=$(moddir "github.com/yannh/kubeconform@${KUBECONFORM##*@}")
(cd "$TMP/schemas" && FILENAME_FORMAT='{kind}-{group}-{version}' python3 "$kc_dir/scripts/openapi2jsonschema.py" \
	"$(moddir "$PROMOP")/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml")
go build -o "$TMP/weir" ./cmd/weir

# render NAME [HELM ARGS...]: lint, template, kubeconform, check-config.
render() {
	local name=$1
	shift
	echo "==> $name: helm lint, helm template"
	helm lint --strict "$CHART" "$@" 2>&1 | grep -v 'found symbolic link' || true
	helm lint --strict "$CHART" "$@" >/dev/null 2>&1 || die "$name: helm lint fails"
	helm template "r-$name" "$CHART" --namespace pki "$@" >"$TMP/$name.yaml" 2>"$TMP/$name.err" ||
		die "$name: helm template fails: $(cat "$TMP/$name.err")"
	echo "==> $name: kubeconform -strict (offline schemas)"
	go run "$KUBECONFORM" -strict -summary -exit-on-error \
		-schema-location "$TMP/schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json" "$TMP/$name.yaml" ||
		die "$name: the rendered manifests do not validate"
	python3 - "$TMP/$name.yaml" "$TMP/$name-weir.yaml" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
kinds = sorted(d["kind"] for d in docs)
print("rendered:", ", ".join(kinds))
cfg = [d["data"]["weir.yaml"] for d in docs if d["kind"] == "ConfigMap" and "weir.yaml" in d.get("data", {})]
assert len(cfg) == 1, "one ConfigMap with weir.yaml"
open(sys.argv[2], "w").write(cfg[0])
dep = [d for d in docs if d["kind"] == "Deployment"][0]
weir = [c for c in dep["spec"]["template"]["spec"]["containers"] if c["name"] == "weir"][0]
assert weir["livenessProbe"]["httpGet"]["path"] == "/healthz", "liveness probe on /healthz"
assert weir["readinessProbe"]["httpGet"]["path"] == "/readyz", "readiness probe on /readyz"
ports = {p["name"]: p["containerPort"] for p in weir["ports"]}
wcfg = yaml.safe_load(cfg[0])
assert wcfg["server"]["http"]["listen"] == "0.0.0.0:%d" % ports["http"], "the plain-HTTP listener on the container's http port"
svc = [d for d in docs if d["kind"] == "Service"][0]
assert "http" in [p["targetPort"] for p in svc["spec"]["ports"]], "the Service exposes the plain-HTTP listener"
PY
	"$TMP/weir" check-config "$TMP/$name-weir.yaml" || die "$name: weir check-config rejects the rendered weir.yaml"
}

render single
grep -q '^kind: PersistentVolumeClaim' "$TMP/single.yaml" || die "single: no PVC"
render ha -f "$CHART/ci/ha-values.yaml"
for k in ServiceMonitor 'name: r-ha-weir-dashboard' 'name: r-ha-weir-root' 'replicas: 3'; do
	grep -q "$k" "$TMP/ha.yaml" || die "ha: $k is missing from the rendered manifests"
done
grep -q '^kind: PersistentVolumeClaim' "$TMP/ha.yaml" && die "ha: a PVC with PostgreSQL"

echo "==> shapes the chart refuses"
refuse() {
	local want=$1
	shift
	if helm template r "$CHART" "$@" >"$TMP/refused.yaml" 2>"$TMP/refused.err"; then
		die "helm template $* renders; want an error about $want"
	fi
	grep -q "$want" "$TMP/refused.err" || die "helm template $*: $(cat "$TMP/refused.err"), want $want"
	echo "refused ($want): $*"
}
refuse "needs storage.driver postgres" --set replicaCount=2
refuse "needs storage.dsnSecret.name" --set storage.driver=postgres
refuse "needs ca.existingSecret" --set replicaCount=2 --set storage.driver=postgres --set storage.dsnSecret.name=x --set rateLimiting.backend=redis --set 'rateLimiting.redis.addrs={r:6379}'
echo "==> helm chart checks passed in $((SECONDS - started))s"

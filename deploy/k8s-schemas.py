#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0

"""Kubernetes JSON schemas for kubeconform, made offline from the OpenAPI
(Swagger 2) document of a Kubernetes release in the Go module cache
(k8s.io/kubernetes@VERSION/api/openapi-spec/swagger.json), as
openapi2jsonschema does for the published schema sets: one file per kind,
named as kubeconform's default location names them ({kind}{-group-version}),
strict (additionalProperties: false wherever properties are listed, as
kubectl validates) and with int-or-string made a oneOf.

Usage: k8s-schemas.py SWAGGER_JSON OUT_DIR
"""
import json
import os
import sys


def fix(node):
    if isinstance(node, dict):
        if node.get("format") == "int-or-string":
            return {"oneOf": [{"type": "string"}, {"type": "integer"}]}
        out = {k: fix(v) for k, v in node.items()}
        if "properties" in out and "additionalProperties" not in out:
            out["additionalProperties"] = False
        if isinstance(out.get("$ref"), str) and out["$ref"].startswith("#/definitions/"):
            out["$ref"] = "_definitions.json" + out["$ref"]
        return out
    if isinstance(node, list):
        return [fix(v) for v in node]
    return node


def main(swagger_path, out_dir):
    with open(swagger_path) as f:
        definitions = json.load(f)["definitions"]
    os.makedirs(out_dir, exist_ok=True)
    fixed = {name: fix(d) for name, d in definitions.items()}
    # Inside _definitions.json the references are local again.
    shared = json.loads(json.dumps(fixed).replace('"_definitions.json#/definitions/', '"#/definitions/'))
    with open(os.path.join(out_dir, "_definitions.json"), "w") as f:
        json.dump({"definitions": shared}, f)
    count = 0
    for name, d in fixed.items():
        for gvk in d.get("x-kubernetes-group-version-kind", []):
            group = gvk["group"].split(".")[0]
            suffix = ("-" + group if group else "") + "-" + gvk["version"]
            path = os.path.join(out_dir, (gvk["kind"] + suffix).lower() + ".json")
            with open(path, "w") as f:
                json.dump(d, f)
            count += 1
    print(f"{count} kind schemas in {out_dir}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])

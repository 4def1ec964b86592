# Reads cloud-config documents as cloud-init 22.4 does: jinja first when the
# document starts with '## template: jinja' (the renderer of
# `cloud-init devel render`), then validate_cloudconfig_file (what
# `cloud-init schema -c` runs) and cloud-init's YAML loader. Prints one JSON
# list of {valid, error, data}, in argument order.
import contextlib
import json
import os
import sys
import tempfile

from cloudinit import safeyaml
from cloudinit.config.schema import get_schema, validate_cloudconfig_file
from cloudinit.handlers.jinja_template import render_jinja_payload_from_file

INSTANCE = {
    "ds": {"meta_data": {"local_hostname": "node-0", "local-hostname": "node-0",
                         "hostname": "node-0", "name": "node-0",
                         "instance_id": "iid-0", "instance-id": "iid-0"}},
    "v1": {"local_hostname": "node-0", "local-hostname": "node-0", "instance_id": "iid-0",
           "instance-id": "iid-0", "cloud_name": "nocloud", "platform": "nocloud",
           "distro": "debian", "region": None, "availability_zone": None},
    "merged_cfg": {},
}

def main():
    schema = get_schema()
    work = tempfile.mkdtemp(prefix="nodeboot-ci-load-")
    inst = os.path.join(work, "instance-data.json")
    with open(inst, "w") as f:
        json.dump(INSTANCE, f)
    results = []
    out = sys.stdout
    # cloud-init prints notes such as its deprecations on stdout.
    with contextlib.redirect_stdout(sys.stderr):
        for path in sys.argv[1:]:
            results.append(load(path, inst, work, schema))
    json.dump([clean(r) for r in results], out, default=str, allow_nan=False)

def clean(v):
    # YAML floats such as .nan and .inf have no JSON form: keep their repr.
    if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return repr(v)
    if isinstance(v, dict):
        return {str(k): clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [clean(x) for x in v]
    return v

def load(path, inst, work, schema):
    with open(path, "rb") as f:
        raw = f.read()
    target = path
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return {"valid": False, "error": "not UTF-8: %s" % e, "data": None}
    if text.lower().startswith("## template: jinja"):
        try:
            rendered = render_jinja_payload_from_file(text, path, inst)
        except Exception as e:  # cloud-init's own failure: the node runs nothing
            return {"valid": False, "error": "jinja: %r" % e, "data": None}
        if not rendered:
            return {"valid": False, "error": "jinja: rendered nothing", "data": None}
        if "CI_MISSING_JINJA_VAR" in rendered:
            return {"valid": False, "error": "jinja: undefined variable", "data": None}
        target = os.path.join(work, os.path.basename(path) + ".rendered")
        with open(target, "w") as f:
            f.write(rendered)
    data = None
    try:
        with open(target, "rb") as f:
            data = safeyaml.load(f.read())
    except Exception as e:
        return {"valid": False, "error": "yaml: %s" % e, "data": None}
    try:
        validate_cloudconfig_file(target, schema)
    except Exception as e:
        paths = [p.path for p in (getattr(e, "schema_errors", None) or ())]
        return {"valid": False, "error": "schema: %s" % e, "data": data, "schema_paths": paths}
    return {"valid": True, "error": "", "data": data}

main()

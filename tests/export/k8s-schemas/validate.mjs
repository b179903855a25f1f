// Validates every KEDA and Karpenter object (JSON files) under a folder against the CRDs' OpenAPI
// schemas, offline, with the @kubernetes-models packages pinned in package-lock.json. Other
// objects (Deployments, HPAs: kubectl checks them) are skipped.
//
// usage: node validate.mjs FOLDER
// exit: 0 all valid (and at least one object checked), 1 a schema error or unreadable file,
//       2 usage, 77 node_modules missing (run `npm ci --prefix tests/export/k8s-schemas`).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const SKIP = 77;
const here = dirname(fileURLToPath(import.meta.url));
if (!existsSync(join(here, "node_modules", "@kubernetes-models"))) {
  console.log(`SKIPPED: ${join(here, "node_modules")} missing (install: npm ci --prefix ${here})`);
  process.exit(SKIP);
}
const folder = process.argv[2];
if (!folder) {
  console.error("usage: node validate.mjs FOLDER");
  process.exit(2);
}

const { ScaledObject } = await import("@kubernetes-models/keda/keda.sh/v1alpha1");
const { NodePool } = await import("@kubernetes-models/karpenter/karpenter.sh/v1");
const { EC2NodeClass } = await import("@kubernetes-models/karpenter/karpenter.k8s.aws/v1");
const models = {
  "keda.sh/v1alpha1 ScaledObject": ScaledObject,
  "karpenter.sh/v1 NodePool": NodePool,
  "karpenter.k8s.aws/v1 EC2NodeClass": EC2NodeClass,
};

function jsonFiles(dir) {
  return readdirSync(dir).sort().flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return jsonFiles(path);
    return name.endsWith(".json") ? [path] : [];
  });
}

const counts = {};
let failures = 0;
for (const path of jsonFiles(folder)) {
  let object;
  try {
    object = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    console.error(`${path}: not JSON: ${error.message}`);
    failures += 1;
    continue;
  }
  const kind = `${object.apiVersion} ${object.kind}`;
  const Model = models[kind];
  if (!Model) continue;
  try {
    new Model(object).validate();
    counts[kind] = (counts[kind] ?? 0) + 1;
  } catch (error) {
    console.error(`${path}: ${kind} does not validate: ${error.message}`);
    failures += 1;
  }
}
const checked = Object.entries(counts).map(([kind, n]) => `${n} ${kind}`).join(", ");
if (failures > 0) process.exit(1);
if (!checked) {
  console.error(`${folder}: no KEDA or Karpenter object found`);
  process.exit(1);
}
console.log(`schema-valid: ${checked}`);

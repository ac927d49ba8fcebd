// Copy the browser files of the npm dependencies into the Python package, so `lightrag serve`
// needs no CDN and a user needs no npm. Run after `npm ci`: `npm run vendor`.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const target = join(here, "..", "lightrag", "server", "static", "vendor");
const files = {
  "cytoscape/dist/cytoscape.min.js": "cytoscape.min.js",
  "cytoscape/LICENSE": "cytoscape.LICENSE.txt",
  "swagger-ui-dist/swagger-ui-bundle.js": "swagger-ui-bundle.js",
  "swagger-ui-dist/swagger-ui.css": "swagger-ui.css",
  "swagger-ui-dist/favicon-32x32.png": "favicon-32x32.png",
  "swagger-ui-dist/LICENSE": "swagger-ui.LICENSE.txt",
  "redoc/bundles/redoc.standalone.js": "redoc.standalone.js",
  "redoc/bundles/redoc.standalone.js.LICENSE.txt": "redoc.standalone.js.LICENSE.txt",
  "redoc/LICENSE": "redoc.LICENSE.txt",
};
mkdirSync(target, { recursive: true });
const manifest = {};
for (const [source, name] of Object.entries(files)) {
  const path = join(here, "node_modules", source);
  const pkg = JSON.parse(readFileSync(join(here, "node_modules", source.split("/")[0], "package.json")));
  copyFileSync(path, join(target, name));
  manifest[name] = {
    package: `${pkg.name}@${pkg.version}`,
    sha256: createHash("sha256").update(readFileSync(path)).digest("hex"),
  };
}
writeFileSync(join(target, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
console.log(`vendored ${Object.keys(files).length} files into ${target}`);

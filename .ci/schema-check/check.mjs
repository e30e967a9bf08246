// Compile JSON Schemas with Ajv in strict draft 2020-12 mode and validate documents.
// stdin:  {"schemas": {Name: schema}, "cases": [{"schema": Name, "document": any}]}
// stdout: {"compileErrors": {Name: message}, "valid": [bool per case]}
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const { schemas, cases } = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats(ajv);
const compileErrors = {};
const validators = {};
for (const [name, schema] of Object.entries(schemas)) {
  try {
    validators[name] = ajv.compile(schema);
  } catch (error) {
    compileErrors[name] = String(error.message);
  }
}
const valid = cases.map(({ schema, document }) =>
  validators[schema] ? validators[schema](document) : null,
);
process.stdout.write(JSON.stringify({ compileErrors, valid }) + "\n");

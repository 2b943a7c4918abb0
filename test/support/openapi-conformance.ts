// Checks answers the server really gave against the OpenAPI document it serves, so the document
// cannot drift from what the server does: for every recorded exchange with a documented operation
// (method and path), the status must be listed; every header sent must be declared, except the
// few that any HTTP answer carries, and each declared as required must be there; the body's media
// type must be declared for that status, and a JSON body must match its schema. startTestServer()
// runs this on everything a suite's server answered when the suite closes it.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { STREAMED, type Exchange } from './exchange-recorder.js';

type JsonObject = Record<string, any>;

/** Headers of the HTTP exchange itself, or the same on every answer: not part of an operation's contract. */
const TRANSPORT_HEADERS = new Set([
  'content-type', 'content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding',
  'x-content-type-options', 'x-frame-options', 'cache-control',
]);

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  responses: JsonObject;
}

export class OpenApiConformance {
  private readonly operations: Operation[];
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new WeakMap<object, ValidateFunction>();

  constructor(private readonly document: JsonObject) {
    addFormats(this.ajv);
    this.operations = Object.entries(document.paths as JsonObject).flatMap(([template, methods]) =>
      Object.entries(methods as JsonObject).map(([method, operation]) => ({
        method: method.toUpperCase(), template, pattern: patternOf(template), responses: (operation as JsonObject).responses,
      })));
  }

  /** What is wrong with one exchange, in sentences; empty when the document describes it. */
  violationsOf(exchange: Exchange): string[] {
    // HEAD is answered by every GET route, with the GET's status and headers and no body.
    const method = exchange.method === 'HEAD' ? 'GET' : exchange.method;
    const path = exchange.path.length > 1 ? exchange.path.replace(/\/$/, '') : exchange.path;
    const operation = this.operations.find((candidate) => candidate.method === method && candidate.pattern.test(path));
    if (!operation) return [];
    const where = `${exchange.method} ${operation.template} answered ${exchange.status}`;
    const response = (operation.responses[String(exchange.status)] ?? operation.responses.default) as JsonObject | undefined;
    if (!response) return [`${where}, a status the document does not list`];
    const resolved = this.resolve(response);
    return [
      ...this.headerViolations(where, resolved, exchange),
      ...(exchange.method === 'HEAD' ? [] : this.bodyViolations(where, resolved, exchange)),
    ];
  }

  private headerViolations(where: string, response: JsonObject, exchange: Exchange): string[] {
    const declared = new Map(Object.entries((response.headers ?? {}) as JsonObject)
      .map(([name, header]) => [name.toLowerCase(), this.resolve(header as JsonObject)]));
    const violations: string[] = [];
    for (const [name, value] of Object.entries(exchange.headers)) {
      if (TRANSPORT_HEADERS.has(name)) continue;
      const header = declared.get(name);
      if (!header) {
        violations.push(`${where} with a ${name} header the document does not declare`);
        continue;
      }
      const schema = header.schema as JsonObject | undefined;
      const typed = schema?.type === 'integer' && /^\d+$/.test(value) ? Number(value) : value;
      if (schema && !this.validatorOf(schema)(typed)) violations.push(`${where} with ${name}: ${value}, which does not match its schema`);
    }
    for (const [name, header] of declared) {
      if (header.required && !(name in exchange.headers)) violations.push(`${where} without the ${name} header the document requires`);
    }
    return violations;
  }

  private bodyViolations(where: string, response: JsonObject, exchange: Exchange): string[] {
    const content = (response.content ?? {}) as JsonObject;
    if (exchange.body === undefined) {
      return Object.keys(content).length > 0 ? [`${where} with no body, where the document describes one`] : [];
    }
    const mediaType = (exchange.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const declared = content[mediaType] as JsonObject | undefined;
    if (!declared) return [`${where} with a ${mediaType || 'untyped'} body, a media type the document does not declare for it`];
    if (exchange.body === STREAMED || !/[/+]json$/.test(mediaType) || !declared.schema) return [];
    let parsed: unknown;
    try {
      parsed = JSON.parse(exchange.body);
    } catch {
      return [`${where} with a body that is not the JSON its media type says`];
    }
    const validate = this.validatorOf(declared.schema as JsonObject);
    if (validate(parsed)) return [];
    const reasons = (validate.errors ?? []).map((error) => `${error.instancePath || '(body)'} ${error.message}`).join('; ');
    return [`${where} with a body that does not match its schema: ${reasons}`];
  }

  /** Follows a `$ref` into the document's components. */
  private resolve(value: JsonObject): JsonObject {
    const ref = value.$ref as string | undefined;
    if (!ref?.startsWith('#/')) return value;
    const target = ref.slice(2).split('/').reduce<any>((node, key) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], this.document);
    if (!target) throw new Error(`The OpenAPI document refers to ${ref}, which it does not contain.`);
    return this.resolve(target as JsonObject);
  }

  private validatorOf(schema: JsonObject): ValidateFunction {
    let validate = this.validators.get(schema);
    if (!validate) {
      validate = this.ajv.compile(this.resolve(schema));
      this.validators.set(schema, validate);
    }
    return validate;
  }
}

/** Every violation of the recorded exchanges, each told once with how often it happened. */
export function conformanceReport(document: JsonObject, exchanges: readonly Exchange[]): string[] {
  const checker = new OpenApiConformance(document);
  const counts = new Map<string, number>();
  for (const exchange of exchanges) {
    for (const violation of checker.violationsOf(exchange)) counts.set(violation, (counts.get(violation) ?? 0) + 1);
  }
  return [...counts].map(([violation, count]) => (count > 1 ? `${violation} (${count} times)` : violation));
}

function patternOf(template: string): RegExp {
  const source = template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')).join('[^/]+');
  return new RegExp(`^${source}$`);
}

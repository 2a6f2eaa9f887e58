import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/** The parts of an OpenAPI 3.1 document the response check reads. */
interface Document {
  paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>>;
  components?: { schemas?: Record<string, unknown> };
}

/** Why a response does not match the document: which operation, which status, what ajv said. */
export class UndocumentedResponseError extends Error {
  override readonly name = 'UndocumentedResponseError';
}

const escapePointer = (part: string) => part.replaceAll('~', '~0').replaceAll('/', '~1');

/**
 * Checks answers of the API against its own OpenAPI document (`app.swagger()`): the operation the method and path
 * name must list the status, and a JSON body must match that status's schema for its media type. A path that names
 * no operation (an unknown route's 404) is not checked.
 */
export class OpenApiResponseCheck {
  readonly #ajv: Ajv2020;
  readonly #routes: { method: string; template: string; pattern: RegExp; literal: number }[];
  readonly #compiled = new Map<string, ValidateFunction>();
  readonly #document: Document;

  constructor(document: object) {
    this.#document = document as Document;
    // OpenAPI 3.1 schemas are JSON Schema 2020-12; the document's own keywords (paths, info, …) are not schema keywords.
    this.#ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(this.#ajv);
    this.#ajv.addSchema({ ...document, $id: 'openapi' });
    this.#routes = Object.entries(this.#document.paths).flatMap(([template, operations]) =>
      Object.keys(operations).map((method) => ({
        method: method.toUpperCase(),
        template,
        pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
        literal: template.replace(/\{[^}]+\}/g, '').length,
      })),
    );
    // The most literal template first: /retry-tasks/batch before /retry-tasks/{taskId}.
    this.#routes.sort((a, b) => b.literal - a.literal);
  }

  /** Throws {@link UndocumentedResponseError} when the answer is not one the document describes. */
  check(method: string, path: string, status: number, contentType: string, body: unknown): void {
    const pathname = path.split('?')[0] ?? path;
    const route = this.#routes.find((r) => r.method === method.toUpperCase() && r.pattern.test(pathname));
    if (route === undefined) return;
    const operation = this.#document.paths[route.template]?.[route.method.toLowerCase()];
    const responses = operation?.responses ?? {};
    const statusKey = String(status) in responses ? String(status) : `${String(status)[0]}XX` in responses ? `${String(status)[0]}XX` : 'default';
    const response = responses[statusKey];
    const where = `${method} ${route.template} ${status}`;
    if (response === undefined) throw new UndocumentedResponseError(`${where}: the document lists no such status`);
    const mediaType = contentType.split(';')[0]?.trim() ?? '';
    if (response.content === undefined || mediaType === '' || !mediaType.includes('json')) return;
    if (!(mediaType in response.content)) throw new UndocumentedResponseError(`${where}: the document lists no ${mediaType} body`);
    const pointer = ['paths', route.template, route.method.toLowerCase(), 'responses', statusKey, 'content', mediaType, 'schema'].map(escapePointer).join('/');
    let validate = this.#compiled.get(pointer);
    if (validate === undefined) {
      validate = this.#ajv.compile({ $ref: `openapi#/${pointer}` });
      this.#compiled.set(pointer, validate);
    }
    if (!validate(body)) {
      throw new UndocumentedResponseError(`${where}: the body does not match the document: ${this.#ajv.errorsText(validate.errors)}`);
    }
  }
}

/** A JSON response documented as a shared schema, with the headers it carries (documented in the OpenAPI document). */
export const json = (description: string, ref: string, headers?: Record<string, object>) => ({
  description,
  ...(headers === undefined ? {} : { headers }),
  content: { 'application/json': { schema: { $ref: `${ref}#` } } },
});

/** The `Location` header of a 201: the path of what was created. */
export const LOCATION_HEADER = { Location: { type: 'string', description: 'The path of what was created, e.g. /retry-tasks/{taskId}.' } };

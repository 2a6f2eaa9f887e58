/**
 * The content security policy of the web console at `/`: it loads only its own files and talks only to this
 * service, nothing inline and nothing from elsewhere, and no other site may frame it (clickjacking).
 */
export const PAGE_CONTENT_SECURITY_POLICY =
  "default-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/**
 * The one inline style Swagger UI writes: the `<style>` of its logo's SVG (two fill colours), allowed by its hash.
 * A newer Swagger UI with another logo makes the docs test in Chromium report the violation and the new hash.
 */
const SWAGGER_LOGO_STYLE = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='";

/** The policy of the API docs at `/docs`: the console's, with Swagger UI's logo style. */
export const DOCS_CONTENT_SECURITY_POLICY = `${PAGE_CONTENT_SECURITY_POLICY}; style-src 'self' ${SWAGGER_LOGO_STYLE}`;

/**
 * The headers of every answer of those pages and their files: the page's policy, `X-Frame-Options: DENY` for
 * browsers that predate `frame-ancestors`, and `nosniff` so that a file is never run as another type than it is sent as.
 */
export function pageSecurityHeaders(policy: string): Readonly<Record<string, string>> {
  return Object.freeze({ 'content-security-policy': policy, 'x-frame-options': 'DENY', 'x-content-type-options': 'nosniff' });
}

/** {@link pageSecurityHeaders} of the console. */
export const PAGE_SECURITY_HEADERS = pageSecurityHeaders(PAGE_CONTENT_SECURITY_POLICY);

/** {@link pageSecurityHeaders} of the API docs. */
export const DOCS_SECURITY_HEADERS = pageSecurityHeaders(DOCS_CONTENT_SECURITY_POLICY);

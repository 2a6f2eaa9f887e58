-- 010-task-request-space: the request's body as its bytes, its headers as JSON text and its URL after its target key
-- (see docs/stores.md, "What a task costs in each store").
--
-- Applied once, in one transaction, by `migrate.ts`, which records it in `schema_migrations`. A database made by 009
-- is migrated in place. Cost on an existing database: one rewrite of `tasks` and of its indexes (the type changes),
-- under an ACCESS EXCLUSIVE lock for its duration, once.
--
-- `body` becomes `bytea`, the body's UTF-8 bytes, instead of `json` holding the body as a JSON string: every `"` and
-- `\` of a JSON body was kept escaped, about 16 B of a small JSON body, and bytea holds U+0000, which text cannot.
-- The bytes are what the dispatcher sends (a string goes out as UTF-8), and what SQLite keeps (its TEXT is UTF-8).
--
-- `headers` becomes `json` instead of `jsonb`: the object's text as the service wrote it (compact, about 5 B less
-- for one header, 8 B less for each header more) rather than jsonb's binary form with its offsets. No statement
-- reads inside it on a hot path; the two that compare or search it (re-seal, the sealed walk) cast it to jsonb. An
-- inline `policy` becomes `json` too (codec `json`, domain/task-fields.ts): no statement reads inside it.
--
-- `target_url` keeps the text after `target_key` (the URL's origin, which the row holds anyway) when the URL begins
-- with it and a path, query or fragment follows: `/charges` for `https://api.example.com/charges`, about 20 bytes
-- less a task. The store reads such a value (it begins with `/`, `?` or `#`, which no absolute URL does) joined to
-- the key again, and any other value as it is (`storedTargetUrl` and `targetUrlOfStored` in domain/target-key.ts,
-- whose rule the USING below repeats).
--
-- Together a small task's row drops from 364 to about 324 bytes, which fits 24 or 25 rows in a heap page instead of
-- 21 or 22.
--
-- The conversion of a body: its JSON string decoded to text and then to UTF-8, except what text cannot hold.
-- `\u0000` becomes the byte 00; a UTF-16 surrogate with no partner (JSON.stringify writes one as `\udXXX`; it has no
-- UTF-8 form) becomes U+FFFD, as encoding the string in JavaScript does. The string is cut into those escapes and
-- the runs between them, each run decoded as a JSON string of its own; the escapes are matched from the left, so a
-- `\\` (an escaped backslash) followed by `u0000` stays text. A body without `\u` is decoded in one step.
-- (A function because ALTER ... USING takes no subquery; dropped at the end.)
CREATE FUNCTION body_bytes_010(body json) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT
RETURN CASE
  WHEN strpos(body::text, '\u') = 0 THEN convert_to(body #>> '{}', 'UTF8')
  ELSE coalesce((
    SELECT string_agg(CASE
        WHEN part.t[1] = '\u0000' THEN '\x00'::bytea
        WHEN length(part.t[1]) = 6 AND part.t[1] ~ '^\\u[dD][89a-fA-F]' THEN '\xefbfbd'::bytea
        ELSE convert_to(('"' || part.t[1] || '"')::json #>> '{}', 'UTF8')
      END, ''::bytea ORDER BY part.n)
    FROM regexp_matches(substr(body::text, 2, length(body::text) - 2),
      '(\\u0000|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[dD][89a-fA-F][0-9a-fA-F]{2}'
      '|(?:[^\\]|\\[^u]|\\u(?!0000|[dD][89a-fA-F]))+)', 'g') WITH ORDINALITY AS part(t, n)), ''::bytea)
END;

ALTER TABLE tasks
  ALTER COLUMN body TYPE bytea USING body_bytes_010(body),
  ALTER COLUMN headers TYPE json USING headers::text::json,
  ALTER COLUMN policy TYPE json USING policy::text::json,
  ALTER COLUMN target_url TYPE text USING CASE
    WHEN length(target_url) > length(target_key)
      AND substr(target_url, 1, length(target_key)) = target_key COLLATE "C"
      AND substr(target_url, length(target_key) + 1, 1) IN ('/', '?', '#')
    THEN substr(target_url, length(target_key) + 1)
    ELSE target_url
  END;

DROP FUNCTION body_bytes_010(json);

-- 009-target-url-after-key: a task's URL kept after its target key (see docs/stores.md, "What a task costs in each
-- store").
--
-- Applied once, in one transaction, by `migrate.ts`, which records it in `schema_migrations`. A database made by 008
-- is migrated in place. Cost on an existing database: one rewrite of every task row whose URL begins with its key,
-- once. The space freed stays in the file, for new rows, until a `VACUUM`.
--
-- `target_url` keeps the text after `target_key` (the URL's origin, which the row holds anyway) when the URL begins
-- with it and a path, query or fragment follows: `/charges` for `https://api.example.com/charges`, about 20 bytes
-- less a task. The store reads such a value (it begins with `/`, `?` or `#`, which no absolute URL does) joined to
-- the key again, and any other value as it is (`storedTargetUrl` and `targetUrlOfStored` in domain/target-key.ts,
-- whose rule this statement repeats). A whole URL reads as it is, so a row this statement leaves alone, or one an
-- earlier version writes, reads right; but an earlier version would read a shortened URL as it is and call it, so
-- stop every earlier instance before this one opens the file.
UPDATE tasks SET target_url = substr(target_url, length(target_key) + 1)
WHERE length(target_url) > length(target_key)
  AND substr(target_url, 1, length(target_key)) = target_key
  AND substr(target_url, length(target_key) + 1, 1) IN ('/', '?', '#');

-- 002-blobs: large request bodies (over the inline limit, 64 KiB by default), for `PostgresBlobStore`.
--
-- Instances on different machines share no disk, so with a shared PostgreSQL the bodies live beside the
-- tasks. A blob is committed (and so durable) before the task that refers to it.

CREATE TABLE blobs (
  tenant_id text COLLATE "C" NOT NULL,
  key       text COLLATE "C" NOT NULL,
  data      bytea            NOT NULL,
  PRIMARY KEY (tenant_id, key)
);

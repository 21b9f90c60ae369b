-- Payloads sent by reference (the claim-check codec, src/infra/claim-check.ts): each is the
-- encoded Temporal Payload, keyed by the SHA-256 of those bytes. Append-only like the rest of the
-- store: the same payload twice is one row.
create table payload_bodies (
  sha256 text primary key,
  payload bytea not null,
  bytes integer not null,
  created_at timestamptz not null default now()
);

-- The conversation store of DESIGN.md §2.
-- items are append-only: never updated, never deleted. A truncated or summarized form is a new item
-- whose source_id points at the original. Contexts are versions made of item references.

create table conversations (
  id              text primary key,
  -- the version the model sees; null only before the first version exists
  active_version  integer,
  status          text not null default 'open' check (status in ('open', 'ended')),
  -- next item sequence number (append order within the conversation)
  next_seq        bigint not null default 1,
  -- next context version number
  next_version    integer not null default 1,
  created_at      timestamptz not null default now(),
  ended_at        timestamptz
);

create table items (
  id              text primary key,
  conversation_id text not null references conversations (id),
  -- append order within the conversation, unique per conversation
  seq             bigint not null,
  type            text not null,
  role            text not null,
  -- the OpenAI-shaped message (or the tool list for TOOL_DEFINITIONS), serialized as JSON text:
  -- text rather than jsonb so that any string survives byte-for-byte (jsonb refuses \u0000)
  body            text not null,
  tokens          integer not null check (tokens >= 0),
  round           integer not null check (round >= 0),
  is_meta         boolean not null default false,
  pinned          boolean not null default false,
  ephemeral       boolean not null default false,
  -- a truncated or summarized form points at what it replaces
  source_id       text references items (id),
  -- extra attributes (summarizer kind, tool name, compaction id) as JSON text
  attrs           text not null default '{}',
  created_at      timestamptz not null default now(),
  unique (conversation_id, seq)
);
create index items_conversation_idx on items (conversation_id, seq);
create index items_source_idx on items (source_id) where source_id is not null;

create table context_versions (
  conversation_id text not null references conversations (id),
  version         integer not null check (version >= 1),
  -- active: the one in use (exactly one per conversation, see conversations.active_version)
  -- staged: written by a compaction, not yet committed
  -- superseded: was active, replaced by a later commit or restore
  -- discarded: a staged version rolled back by compensation
  status          text not null check (status in ('active', 'staged', 'superseded', 'discarded')),
  -- the version this one was derived from (null for the first)
  base_version    integer,
  -- how it came to be: start, compaction, restore, import
  origin          text not null,
  compaction_id   text,
  -- the writer's idempotency key: a retried activity finds the version it already wrote
  idem_key        text not null,
  created_at      timestamptz not null default now(),
  primary key (conversation_id, version),
  unique (conversation_id, idem_key)
);

create table context_version_items (
  conversation_id text not null,
  version         integer not null,
  position        integer not null,
  item_id         text not null references items (id),
  primary key (conversation_id, version, position),
  unique (conversation_id, version, item_id),
  foreign key (conversation_id, version) references context_versions (conversation_id, version)
);
create index context_version_items_item_idx on context_version_items (item_id);

alter table conversations
  add constraint conversations_active_version_fk
  foreign key (id, active_version) references context_versions (conversation_id, version)
  deferrable initially deferred;

create table compactions (
  id              text primary key,
  conversation_id text not null references conversations (id),
  -- 1, 2, 3 ... per conversation (the n of the child workflow id <conversation>/compaction-<n>)
  seq             integer not null,
  trigger         text not null,
  status          text not null check (status in ('running', 'committed', 'rolled_back', 'skipped')),
  strategy        text,
  task_type       text,
  focus           text,
  base_version    integer not null,
  -- items in the base version when the compaction read it: commit refuses if the base changed since
  base_item_count integer,
  staged_version  integer,
  tokens_before   integer,
  tokens_after    integer,
  items_compacted integer,
  summary_item_id text references items (id),
  reason          text,
  attempts        integer not null default 0,
  -- per-phase timings (ms), as JSON text
  timings         text not null default '{}',
  started_at      timestamptz not null default now(),
  finished_at     timestamptz,
  unique (conversation_id, seq)
);
create index compactions_conversation_idx on compactions (conversation_id, seq);

-- The meta events of seed 003 (selective_start/done, summary_start/done, rollback, commit, cooldown),
-- one row per event, keyed so that a retried activity does not record an event twice.
create table compaction_events (
  compaction_id   text not null references compactions (id),
  key             text not null,
  phase           text not null,
  data            text not null default '{}',
  created_at      timestamptz not null default now(),
  primary key (compaction_id, key)
);

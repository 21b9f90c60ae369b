-- Recall (issue 24): the agent, and people, search and read what compactions archived.
--
-- handle: the first 16 hex digits of the SHA-256 of the item's id (src/context/recall-handle.ts
-- computes the same digits); `#a1f3c2` in the context is a prefix of it, resolved within one
-- conversation only.
--
-- search: the item's lexemes and positions, made by src/store/search-terms.ts (paths, identifiers,
-- camelCase and snake_case parts, error codes: not PostgreSQL's English parser) and written with the
-- item. An empty vector: nothing to search (derived items: cut forms, summaries, carried state, the
-- tool list, recall's own results). Null: stored before this migration; the store indexes such
-- rows of a conversation the first time it is searched.
alter table items add column handle text;
alter table items add column search tsvector;

update items set handle = left(encode(sha256(convert_to(id, 'UTF8')), 'hex'), 16);
alter table items alter column handle set not null;

-- Every writer gets the handle, whatever it inserts: the id decides it.
create function items_set_handle() returns trigger language plpgsql as $$
begin
  new.handle := left(encode(sha256(convert_to(new.id, 'UTF8')), 'hex'), 16);
  return new;
end
$$;
create trigger items_handle before insert on items for each row execute function items_set_handle();

create index items_handle_idx on items (conversation_id, handle text_pattern_ops);
create index items_search_idx on items using gin (search);

/**
 * The tables and functions of the PostgreSQL queue ([docs/spec.md §20](../../docs/spec.md#§20-leases-on-postgresql)), one schema per set of
 * queues. Every verb is one function, so one statement and one transaction; the tables are read only through them.
 *
 * @internal
 */
import { expected } from "../validate.js";

/** A schema name the queue accepts: lower case, digits and `_`, not starting with a digit, at most 63 bytes. */
const schemaName = /^[a-z_][a-z0-9_]{0,62}$/;

/** Throws a `TypeError` unless `schema` is a schema name the queue can quote safely. */
export function assertSchema(schema: unknown): asserts schema is string {
  if (typeof schema !== "string" || !schemaName.test(schema)) {
    throw new TypeError(expected("schema", "a lower-case SQL identifier such as workqueue", schema));
  }
}

/** The channel `LISTEN/NOTIFY` uses for the schema's queues; the payload is the queue's name. */
export function channelOf(schema: string): string {
  return `${schema}_workqueue`;
}

/**
 * The migration: idempotent, so running it again (or from several processes at once, under the advisory lock
 * `migrate` takes) changes nothing. Times are milliseconds as `double precision`; `now` is the caller's clock or,
 * when `null`, the database's.
 *
 * Item rows are kept once created: a row remembers the latest token handed out for its item, which is what tells a
 * stale lease from a finished one (§20.4).
 */
export function migration(schema: string): string {
  const s = `"${schema}"`;
  const channel = channelOf(schema);
  return `
create schema if not exists ${s};
create table if not exists ${s}.queues (
  name text collate "C" primary key,
  shutting_down boolean not null default false
);
create sequence if not exists ${s}.positions;
create sequence if not exists ${s}.tokens;
create table if not exists ${s}.items (
  queue text collate "C" not null,
  item text collate "C" not null,
  queued_ms double precision,
  position bigint,
  in_flight boolean not null default false,
  dirty boolean not null default false,
  token bigint not null default 0,
  lease text not null default 'none' check (lease in ('none', 'live', 'finished', 'expired')),
  expires_ms double precision,
  failures bigint not null default 0,
  primary key (queue, item),
  check (not (in_flight and queued_ms is not null)),
  check (in_flight = (lease = 'live'))
);
create index if not exists items_queued on ${s}.items (queue, queued_ms, position) where queued_ms is not null;
create index if not exists items_leased on ${s}.items (queue, expires_ms) where in_flight;

create or replace function ${s}.clock(p_now double precision) returns double precision
language sql as $$ select coalesce(p_now, extract(epoch from clock_timestamp()) * 1000) $$;

create or replace function ${s}.shutting_down(p_queue text) returns boolean
language sql stable as $$ select coalesce((select shutting_down from ${s}.queues where name = p_queue), false) $$;

-- §20.3: every lease that expired by now puts its item back at the tail, in the order the leases expired, at the
-- instant each expired; the failure count is kept and the dirty mark is served by the requeue.
create or replace function ${s}.expire(p_queue text, p_now double precision) returns void
language plpgsql as $$
declare r record;
begin
  for r in select item, expires_ms from ${s}.items
      where queue = p_queue and in_flight and expires_ms <= p_now
      order by expires_ms, token for update skip locked loop
    update ${s}.items set in_flight = false, dirty = false, lease = 'expired', expires_ms = null,
        queued_ms = r.expires_ms, position = nextval('${s}.positions')
      where queue = p_queue and item = r.item;
    perform pg_notify('${channel}', p_queue);
  end loop;
end $$;

-- §4 with the queue's clock: queue an absent item, mark an in-flight one dirty, keep a queued one in place.
create or replace function ${s}.enqueue(p_queue text, p_item text, p_now double precision) returns void
language plpgsql as $$
declare r record;
begin
  insert into ${s}.items (queue, item) values (p_queue, p_item) on conflict do nothing;
  select * into r from ${s}.items where queue = p_queue and item = p_item for update;
  if r.queued_ms is not null then return; end if;
  if r.in_flight then
    update ${s}.items set dirty = true where queue = p_queue and item = p_item;
    return;
  end if;
  update ${s}.items set queued_ms = p_now, position = nextval('${s}.positions')
    where queue = p_queue and item = p_item;
  perform pg_notify('${channel}', p_queue);
end $$;

create or replace function ${s}.add(p_queue text, p_item text, p_now double precision) returns void
language plpgsql as $$
declare v_now double precision := ${s}.clock(p_now);
begin
  perform ${s}.expire(p_queue, v_now);
  if ${s}.shutting_down(p_queue) then return; end if; -- §12.3
  perform ${s}.enqueue(p_queue, p_item, v_now);
end $$;

-- §5 and §20.2: the oldest queued item, in flight under a new lease.
create or replace function ${s}.get(p_queue text, p_now double precision, p_lease_ms double precision)
returns table (item text, token bigint, expires_ms double precision)
language plpgsql as $$
declare v_now double precision := ${s}.clock(p_now); v_item text; v_token bigint;
begin
  perform ${s}.expire(p_queue, v_now);
  select i.item into v_item from ${s}.items i
    where i.queue = p_queue and i.queued_ms is not null
    order by i.queued_ms, i.position limit 1 for update skip locked;
  if v_item is null then return; end if;
  v_token := nextval('${s}.tokens');
  update ${s}.items i set queued_ms = null, position = null, in_flight = true, dirty = false, token = v_token,
      lease = 'live', expires_ms = v_now + p_lease_ms
    where i.queue = p_queue and i.item = v_item;
  return query select v_item, v_token, v_now + p_lease_ms;
end $$;

-- §20.4: whether a call with token p_token may act on the item: not when a later lease was handed out, nor when
-- this one expired. Locks the item's row, creating it, so the caller's change is atomic.
create or replace function ${s}.fenced(p_queue text, p_item text, p_token bigint) returns boolean
language plpgsql as $$
declare r record;
begin
  insert into ${s}.items (queue, item) values (p_queue, p_item) on conflict do nothing;
  select * into r from ${s}.items where queue = p_queue and item = p_item for update;
  return p_token = r.token and r.lease <> 'expired';
end $$;

-- §6.
create or replace function ${s}.done(p_queue text, p_item text, p_token bigint, p_now double precision) returns text
language plpgsql as $$
declare v_now double precision := ${s}.clock(p_now); r record;
begin
  perform ${s}.expire(p_queue, v_now);
  if not ${s}.fenced(p_queue, p_item, p_token) then return 'stale'; end if;
  select * into r from ${s}.items where queue = p_queue and item = p_item;
  if not r.in_flight then return 'ok'; end if; -- §6.3
  update ${s}.items set in_flight = false, lease = 'finished', expires_ms = null, dirty = false
    where queue = p_queue and item = p_item;
  if r.dirty then perform ${s}.enqueue(p_queue, p_item, v_now); end if; -- §6.2
  return 'ok';
end $$;

-- §7 and §12.4.
create or replace function ${s}.retry(p_queue text, p_item text, p_token bigint, p_now double precision,
    p_max_retries double precision) returns text
language plpgsql as $$
declare v_now double precision := ${s}.clock(p_now); v_failures bigint;
begin
  perform ${s}.expire(p_queue, v_now);
  if not ${s}.fenced(p_queue, p_item, p_token) then return 'stale'; end if;
  update ${s}.items set failures = failures + 1 where queue = p_queue and item = p_item
    returning failures into v_failures;
  if v_failures >= p_max_retries or ${s}.shutting_down(p_queue) then return 'gave up'; end if;
  perform ${s}.enqueue(p_queue, p_item, v_now);
  return 'requeued';
end $$;

-- §8.
create or replace function ${s}.forget(p_queue text, p_item text, p_token bigint, p_now double precision) returns text
language plpgsql as $$
begin
  perform ${s}.expire(p_queue, ${s}.clock(p_now));
  if not ${s}.fenced(p_queue, p_item, p_token) then return 'stale'; end if;
  update ${s}.items set failures = 0 where queue = p_queue and item = p_item;
  return 'ok';
end $$;

-- §20.5: a live lease lasts p_lease_ms more from now; the answer is its new expiry, or null when it is not live.
create or replace function ${s}.extend(p_queue text, p_item text, p_token bigint, p_now double precision,
    p_lease_ms double precision) returns double precision
language plpgsql as $$
declare v_now double precision := ${s}.clock(p_now); v_expires double precision;
begin
  perform ${s}.expire(p_queue, v_now);
  if not ${s}.fenced(p_queue, p_item, p_token) then return null; end if;
  update ${s}.items set expires_ms = v_now + p_lease_ms where queue = p_queue and item = p_item and in_flight
    returning expires_ms into v_expires;
  return v_expires;
end $$;

-- §9 and §12.2, and the earliest lease expiry, which a waiting take sets its timer by.
create or replace function ${s}.views(p_queue text, p_now double precision)
returns table (size bigint, in_flight bigint, shutting_down boolean, next_expiry double precision)
language plpgsql as $$
begin
  perform ${s}.expire(p_queue, ${s}.clock(p_now));
  return query select
    (select count(*) from ${s}.items i where i.queue = p_queue and i.queued_ms is not null),
    (select count(*) from ${s}.items i where i.queue = p_queue and i.in_flight),
    ${s}.shutting_down(p_queue),
    (select min(i.expires_ms) from ${s}.items i where i.queue = p_queue and i.in_flight);
end $$;

create or replace function ${s}.failures(p_queue text, p_item text) returns bigint
language sql stable as $$
  select coalesce((select failures from ${s}.items where queue = p_queue and item = p_item), 0)
$$;

-- §12.1.
create or replace function ${s}.shut_down(p_queue text) returns void
language plpgsql as $$
begin
  insert into ${s}.queues (name, shutting_down) values (p_queue, true)
    on conflict (name) do update set shutting_down = true;
  perform pg_notify('${channel}', p_queue);
end $$;
`;
}

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

/**
 * The version of the schema this package makes: 1 kept every item's row for ever; 2 deletes the rows of idle items
 * (§20.9); 3 keeps what the metrics read (§20.17): each lease's hand-out time, the queue's count of expired leases,
 * and the functions answer what a process counts; 4 adds `finish_many`, a handled lease's forget and done in one
 * statement. `migrate` upgrades an older schema and refuses a newer one, whose
 * functions this package would replace with older ones.
 */
export const schemaVersion = 4;

/** The channel `LISTEN/NOTIFY` uses for the schema's queues; the payload is the queue's name. */
export function channelOf(schema: string): string {
  return `${schema}_workqueue`;
}

/**
 * The migration: idempotent, so running it again (or from several processes at once, under the advisory lock
 * `migrate` takes) changes nothing. Times are milliseconds as `double precision`; `now` is the caller's clock or,
 * when `null`, the database's.
 *
 * An item's row lives while the item is queued, in flight, waiting or has failures counted; the call that makes it
 * idle deletes it (§20.9), so the table holds live work only. A missing row means "no live lease", which is all
 * the fence asks (§20.4): a lease is accepted only while live, and tokens come from one sequence of the schema, so
 * a row made again starts below every token handed out and refuses them all. The queue's order is a table of its own, `queued`, whose rows only the
 * `get` that takes them locks; `get`s run one at a time per queue (`lock_queue`), each taking the head, so they
 * answer in the queue's order (§10.8), and the `get`s a process sends together go out as one `get_many`.
 */
export function migration(schema: string): string {
  const s = `"${schema}"`;
  const channel = channelOf(schema);
  return `
create schema if not exists ${s};
create table if not exists ${s}.version (version integer not null);
do $$
declare v integer := (select max(version) from ${s}.version);
begin
  if v > ${schemaVersion} then
    raise exception 'the schema "${schema}" is at version %, made by a newer workqueue-spec; this one makes version ${schemaVersion} and would downgrade it: upgrade workqueue-spec', v
      using errcode = 'WQ001';
  end if;
end $$;
delete from ${s}.version;
insert into ${s}.version values (${schemaVersion});
create table if not exists ${s}.queues (
  name text collate "C" primary key,
  shutting_down boolean not null default false
);
-- §20.17: the leases of the queue that expired, counted by settle (version 3).
alter table ${s}.queues add column if not exists expired bigint not null default 0;
create sequence if not exists ${s}.positions;
create sequence if not exists ${s}.tokens;
create sequence if not exists ${s}.dues;
create table if not exists ${s}.items (
  queue text collate "C" not null,
  item text collate "C" not null,
  in_flight boolean not null default false,
  dirty boolean not null default false,
  token bigint not null default 0,
  lease text not null default 'none' check (lease in ('none', 'live', 'finished', 'expired')),
  expires_ms double precision,
  failures bigint not null default 0,
  due_ms double precision,
  due_order bigint,
  primary key (queue, item),
  check (in_flight = (lease = 'live'))
);
-- §20.17: when the item's latest lease was handed out (version 3; null for a lease a version 2 schema handed out).
alter table ${s}.items add column if not exists leased_ms double precision;
-- Version 3 changed what these answer, which create or replace cannot do: they are made again below.
drop function if exists ${s}.enter(text, text, double precision);
drop function if exists ${s}.enqueue(text, text, double precision);
drop function if exists ${s}.add(text, text, double precision);
drop function if exists ${s}.add_many(text, text[], double precision);
drop function if exists ${s}.get(text, double precision, double precision);
drop function if exists ${s}.get_many(text, double precision, double precision, int);
drop function if exists ${s}.done(text, text, bigint, double precision);
drop function if exists ${s}.done_many(text, text[], bigint[], double precision);
-- An item is queued when it has a row here, and then it is not in flight: enter adds the row only to an item that
-- is neither, get deletes it as it puts the item in flight.
create table if not exists ${s}.queued (
  queue text collate "C" not null,
  item text collate "C" not null,
  queued_ms double precision not null,
  position bigint not null,
  primary key (queue, item)
);
create index if not exists queued_order on ${s}.queued (queue, queued_ms, position);
create index if not exists items_leased on ${s}.items (queue, expires_ms) where in_flight;
create index if not exists items_waiting on ${s}.items (queue, due_ms, due_order) where due_ms is not null;

create or replace function ${s}.clock(p_now double precision) returns double precision
language sql as $$ select coalesce(p_now, extract(epoch from clock_timestamp()) * 1000) $$;

-- Whether an item falls due or a lease expires by now: the earliest due time and the earliest expiry, each the first
-- entry of its partial index (items_waiting, items_leased), so two index probes whatever the queue holds. (Written
-- as "exists … where due_ms <= p_now", the planner guessed a third of the rows match and scanned the whole table:
-- 10 ms at 100,000 rows, in every call.)
create or replace function ${s}.unsettled(p_queue text, p_now double precision) returns boolean
language sql volatile as $$
  select coalesce((select i.due_ms from ${s}.items i where i.queue = p_queue and i.due_ms is not null
      order by i.due_ms limit 1) <= p_now, false)
    or coalesce((select i.expires_ms from ${s}.items i where i.queue = p_queue and i.in_flight
      order by i.expires_ms limit 1) <= p_now, false)
$$;

-- Serialises get and the calls that may queue an item, per queue, until they commit (§10.8, §20.2): their time is
-- read and their positions are taken or handed out under it, so in commit order, and an item that one call saw
-- queued is never overtaken by one queued by a call that committed after it, nor handed out behind a younger one.
-- Taken before the call locks a row of its own (a batched done may hold the rows of the dones before it, and a
-- deadlock with a settle is then made again, §20.8); settle takes it too.
create or replace function ${s}.lock_queue(p_queue text) returns void
language plpgsql as $$
begin
  perform pg_advisory_xact_lock(hashtextextended('${schema}/' || p_queue, 0));
end $$;

create or replace function ${s}.shutting_down(p_queue text) returns boolean
language sql stable as $$ select coalesce((select shutting_down from ${s}.queues where name = p_queue), false) $$;

-- The item's row, made when missing and locked. A concurrent tidy may delete the row between the insert that found
-- it and the lock: the loop then makes it again.
create or replace function ${s}.item_row(p_queue text, p_item text) returns ${s}.items
language plpgsql as $$
declare r ${s}.items;
begin
  loop
    insert into ${s}.items (queue, item) values (p_queue, p_item) on conflict do nothing;
    select * into r from ${s}.items where queue = p_queue and item = p_item for update;
    if found then return r; end if;
  end loop;
end $$;

-- §20.9: deletes the item's row when the item is idle: not queued, in flight, dirty or waiting, and no failure
-- counted. Its lease, if any, ended; the row's token goes with it (§20.4 still refuses that lease). Every deletion
-- of an idle row (here, and in done's and done_many's common case) ends its condition with "i.failures = 0", by
-- which the wrong schemas and bench/storage.ts disable them all.
create or replace function ${s}.tidy(p_queue text, p_item text) returns void
language sql as $$
  delete from ${s}.items i where i.queue = p_queue and i.item = p_item and not i.in_flight and not i.dirty
    and i.due_ms is null and i.failures = 0
    and not exists (select from ${s}.queued q where q.queue = p_queue and q.item = p_item)
$$;

-- §4 at the instant p_at, also while shutting down (§17.5, §17.7): queue an absent item, mark an in-flight one
-- dirty, keep a queued one in place. Answers whether it changed something: queued the item or newly marked it
-- dirty, what §19.2 counts.
create or replace function ${s}.enter(p_queue text, p_item text, p_at double precision) returns boolean
language plpgsql as $$
declare r ${s}.items := ${s}.item_row(p_queue, p_item);
begin
  if exists (select from ${s}.queued where queue = p_queue and item = p_item) then return false; end if;
  if r.in_flight then
    update ${s}.items set dirty = true where queue = p_queue and item = p_item;
    return not r.dirty;
  end if;
  insert into ${s}.queued (queue, item, queued_ms, position)
    values (p_queue, p_item, p_at, nextval('${s}.positions'));
  perform pg_notify('${channel}', '+' || p_queue); -- one item: one waiting take can use it (§20.10)
  return true;
end $$;

-- What happened by now, applied at the instant each happened, earliest first (§17.5, §20.3): a waiting item falls
-- due (§4 at its due time; ties in the order the due times were set), and a live lease expires, putting its item
-- back at the tail of the queue (dirty or not, while shutting down too; its wait ends, its failure count is kept).
-- At one instant, what falls due goes before what expires. Settling is serialised per queue by an advisory lock,
-- taken only when something is to settle, and waits for the rows other transactions hold: a call never answers
-- from a state in which something it should see as settled is not (§20.6).
create or replace function ${s}.settle(p_queue text, p_now double precision) returns void
language plpgsql as $$
declare due record; expiry record;
begin
  if not ${s}.unsettled(p_queue, p_now) then return; end if;
  perform ${s}.lock_queue(p_queue);
  -- Each statement sees what was committed when it started, so the loop ends only when a fresh look finds nothing.
  while ${s}.unsettled(p_queue, p_now) loop
    select item, due_ms into due from ${s}.items
      where queue = p_queue and due_ms <= p_now order by due_ms, due_order limit 1 for update;
    select item, expires_ms into expiry from ${s}.items
      where queue = p_queue and in_flight and expires_ms <= p_now order by expires_ms, token limit 1 for update;
    if due.item is not null and (expiry.item is null or due.due_ms <= expiry.expires_ms) then
      update ${s}.items set due_ms = null, due_order = null where queue = p_queue and item = due.item;
      perform ${s}.enter(p_queue, due.item, due.due_ms);
    elsif expiry.item is not null then
      update ${s}.items set in_flight = false, dirty = false, lease = 'expired', expires_ms = null,
          due_ms = null, due_order = null
        where queue = p_queue and item = expiry.item;
      perform ${s}.enter(p_queue, expiry.item, expiry.expires_ms); -- at the tail, at the instant it expired
      insert into ${s}.queues as q (name, expired) values (p_queue, 1)
        on conflict (name) do update set expired = q.expired + 1; -- §20.17
    end if;
  end loop;
end $$;

-- §4 and §17.4: an accepted add ends the item's wait, then enters it; answers what enter answers.
create or replace function ${s}.enqueue(p_queue text, p_item text, p_now double precision) returns boolean
language plpgsql as $$
begin
  update ${s}.items set due_ms = null, due_order = null where queue = p_queue and item = p_item and due_ms is not null;
  return ${s}.enter(p_queue, p_item, p_now);
end $$;

-- Answers whether the add changed something (§19.2, §20.17).
create or replace function ${s}.add(p_queue text, p_item text, p_now double precision) returns boolean
language plpgsql as $$
declare v_now double precision;
begin
  perform ${s}.lock_queue(p_queue);
  v_now := ${s}.clock(p_now);
  perform ${s}.settle(p_queue, v_now);
  if ${s}.shutting_down(p_queue) then return false; end if; -- §12.3
  return ${s}.enqueue(p_queue, p_item, v_now);
end $$;

-- The adds a process sent together (§20.1): what happened by now settled once, then each item as add enters it,
-- in their order. Answers how many changed something (§19.2, §20.17). Set-based, as many adds one after another
-- would leave the queue: each item once, at its first place (a second add of it changes nothing); their waits end
-- (§17.4); their rows made when missing and locked, as item_row does one by one (a concurrent tidy may delete one
-- between the insert and the lock: it is made again); those in flight marked dirty; the others not already queued
-- queued at the tail in the call's order; and one notification, as enter's one per item, being identical, are
-- delivered once per transaction.
create or replace function ${s}.add_many(p_queue text, p_items text[], p_now double precision) returns integer
language plpgsql as $$
declare v_now double precision; v_items text[]; v_busy text[]; v_new text[]; v_locked integer; v_dirtied integer;
begin
  perform ${s}.lock_queue(p_queue);
  v_now := ${s}.clock(p_now);
  perform ${s}.settle(p_queue, v_now);
  if ${s}.shutting_down(p_queue) then return 0; end if; -- §12.3
  v_items := array(select u.item from unnest(p_items) with ordinality u(item, n) group by u.item order by min(u.n));
  update ${s}.items i set due_ms = null, due_order = null
    where i.queue = p_queue and i.item = any(v_items) and i.due_ms is not null;
  loop
    insert into ${s}.items (queue, item) select p_queue, u.item from unnest(v_items) u(item) on conflict do nothing;
    select count(*), coalesce(array_agg(l.item) filter (where l.in_flight), '{}') into v_locked, v_busy
      from (select i.item, i.in_flight from ${s}.items i where i.queue = p_queue and i.item = any(v_items) for update) l;
    exit when v_locked = cardinality(v_items);
  end loop;
  update ${s}.items i set dirty = true where i.queue = p_queue and i.item = any(v_busy) and not i.dirty;
  get diagnostics v_dirtied = row_count;
  v_new := array(select u.item from unnest(v_items) with ordinality u(item, n)
    where u.item <> all(v_busy) and not exists (select from ${s}.queued q where q.queue = p_queue and q.item = u.item)
    order by u.n);
  if cardinality(v_new) > 0 then
    insert into ${s}.queued (queue, item, queued_ms, position)
      select p_queue, t.item, v_now, t.position
      from unnest(v_new, array(select nextval('${s}.positions') from generate_series(1, cardinality(v_new))))
        t(item, position);
    perform pg_notify('${channel}', '+' || p_queue); -- as enter's, one per transaction (§20.10)
  end if;
  return v_dirtied + cardinality(v_new);
end $$;

-- §17.1–§17.3, §17.7: a delay that is not positive is an add; otherwise an absent item, or one in flight and
-- clean, waits until now + delay, and of two due times the earlier wins, re-ranked when moved earlier.
create or replace function ${s}.wait(p_queue text, p_item text, p_now double precision, p_delay double precision)
returns void
language plpgsql as $$
declare r ${s}.items; v_due double precision := p_now + p_delay;
begin
  if p_delay <= 0 then perform ${s}.enqueue(p_queue, p_item, p_now); return; end if;
  r := ${s}.item_row(p_queue, p_item);
  if r.dirty or exists (select from ${s}.queued where queue = p_queue and item = p_item) then return; end if; -- §17.2
  if r.due_ms is null or v_due < r.due_ms then
    update ${s}.items set due_ms = v_due, due_order = nextval('${s}.dues') where queue = p_queue and item = p_item;
    perform pg_notify('${channel}', p_queue); -- a waiting take sets its timer by the earliest due time (§20.10)
  end if;
end $$;

create or replace function ${s}.add_after(p_queue text, p_item text, p_now double precision, p_delay double precision)
returns void
language plpgsql as $$
declare v_now double precision;
begin
  perform ${s}.lock_queue(p_queue);
  v_now := ${s}.clock(p_now);
  perform ${s}.settle(p_queue, v_now);
  if ${s}.shutting_down(p_queue) then return; end if; -- §12.3, §17.7
  perform ${s}.wait(p_queue, p_item, v_now, p_delay);
end $$;

-- §18.2 as written: the base, doubled failures − 1 times (doubling is exact; 2,099 doublings take every positive
-- base past every finite max), at most the max; 0 without a backoff.
create or replace function ${s}.backoff(p_failures bigint, p_base double precision, p_max double precision)
returns double precision
language plpgsql immutable as $$
declare v_delay double precision := p_base; n bigint := 1;
begin
  if p_base is null then return 0; end if;
  while n < least(p_failures, 2100) and v_delay < p_max loop
    if v_delay > p_max / 2 then return p_max; end if; -- doubling passes the max (and would overflow near 2^1024)
    v_delay := v_delay * 2;
    n := n + 1;
  end loop;
  return least(p_max, v_delay);
end $$;

-- §5 and §20.2: the oldest queued item, in flight under a new lease, or no row when nothing is queued; with how
-- long it was queued (§19.3, §20.17).
create or replace function ${s}.get(p_queue text, p_now double precision, p_lease_ms double precision)
returns table (item text, token bigint, expires_ms double precision, queued_for_ms double precision)
language plpgsql as $$
declare v_now double precision; v_item text; v_token bigint; v_queued double precision;
begin
  -- A get that skipped the head another get was taking, and answered before that one committed, would be seen by
  -- a view in between as handing out an item out of order (§10.8).
  perform ${s}.lock_queue(p_queue); -- one get at a time per queue, until it commits
  v_now := ${s}.clock(p_now);
  perform ${s}.settle(p_queue, v_now);
  -- The head, waiting for a call that holds its row (an add of it while queued, a forget): never a younger item.
  select q.item into v_item from ${s}.queued q where q.queue = p_queue order by q.queued_ms, q.position limit 1 for update;
  if v_item is null then return; end if;
  delete from ${s}.queued q where q.queue = p_queue and q.item = v_item returning q.queued_ms into v_queued;
  v_token := nextval('${s}.tokens');
  update ${s}.items i set in_flight = true, dirty = false, token = v_token,
      lease = 'live', expires_ms = v_now + p_lease_ms, leased_ms = v_now
    where i.queue = p_queue and i.item = v_item;
  return query select v_item, v_token, v_now + p_lease_ms, v_now - v_queued;
end $$;

-- The gets a process sent together (§20.1): up to p_count heads in order, each in flight under a lease of its own,
-- as that many gets one after another would hand them out; fewer when fewer are queued. They are lease_many's,
-- without the places.
create or replace function ${s}.get_many(p_queue text, p_now double precision, p_lease_ms double precision, p_count int)
returns table (item text, token bigint, expires_ms double precision, queued_for_ms double precision)
language plpgsql as $$
begin
  return query select l.item, l.token, l.expires_ms, l.queued_for_ms
    from ${s}.lease_many(p_queue, p_now, p_lease_ms, p_count) with ordinality l(item, token, expires_ms,
      queued_for_ms, queued_ms, queued_position, n)
    order by l.n;
end $$;

-- §20.18: the gets of a queue object with prefetched leases (and get_many's): up to p_count heads in order, each in
-- flight under a lease of its own, as that many gets one after another would hand them out, fewer when fewer are
-- queued; each answered with its place in the queue (queued_ms, position), which release_many gives back to a lease
-- the object did not hand on. Set-based, one pass over the heads whatever p_count: one statement locks them in the
-- queue's order (waiting, as get does, for a call that holds one) and deletes their queued rows, one draws their
-- tokens in hand-out order (increasing, as successive gets draw them), one puts them in flight. Both writes join
-- their rows with the heads by key, so their cost is linear in the heads: the planner probes the primary key once
-- per head, or hashes the queue's rows when the heads are a large share of them (2,000 of 100,000). Written as
-- "item = any(array)", each row scanned compared its item with the whole array (a sequential scan while the
-- table is small), and its token was found by array_position, each quadratic in the heads.
create or replace function ${s}.lease_many(p_queue text, p_now double precision, p_lease_ms double precision,
    p_count int)
returns table (item text, token bigint, expires_ms double precision, queued_for_ms double precision,
    queued_ms double precision, queued_position bigint)
language plpgsql as $$
declare v_now double precision; v_items text[]; v_queued double precision[]; v_positions bigint[];
  v_tokens bigint[];
begin
  perform ${s}.lock_queue(p_queue); -- one get at a time per queue, until it commits (§10.8)
  v_now := ${s}.clock(p_now);
  perform ${s}.settle(p_queue, v_now);
  with heads as (
    delete from ${s}.queued q using (
        select h.item from ${s}.queued h where h.queue = p_queue order by h.queued_ms, h.position limit p_count
        for update) h
      where q.queue = p_queue and q.item = h.item
      returning q.item, q.queued_ms, q.position
  )
  select array_agg(h.item order by h.queued_ms, h.position), array_agg(h.queued_ms order by h.queued_ms, h.position),
      array_agg(h.position order by h.queued_ms, h.position)
    into v_items, v_queued, v_positions
    from heads h;
  if v_items is null then return; end if;
  v_tokens := array(select nextval('${s}.tokens') from generate_series(1, cardinality(v_items)));
  update ${s}.items i set in_flight = true, dirty = false, token = t.token,
      lease = 'live', expires_ms = v_now + p_lease_ms, leased_ms = v_now
    from unnest(v_items, v_tokens) t(item, token)
    where i.queue = p_queue and i.item = t.item;
  return query select t.item, t.token, v_now + p_lease_ms, v_now - t.queued, t.queued, t.position
    from unnest(v_items, v_tokens, v_queued, v_positions) with ordinality t(item, token, queued, position, n)
    order by t.n;
end $$;

-- §20.18: gives back the leases a queue object prefetched and did not hand on, each fenced by its token: a live
-- lease ends and its item is queued again at its place (p_queued_ms, p_positions, as lease_many answered them),
-- its dirty mark and wait served by that (§4, §17.2); a lease no longer live changes nothing. It settles nothing
-- first: a lease that expired and that no call put back yet goes back to its place too, as nobody saw it expire.
-- Answers how many went back.
create or replace function ${s}.release_many(p_queue text, p_items text[], p_tokens bigint[],
    p_queued_ms double precision[], p_positions bigint[]) returns integer
language plpgsql as $$
declare v_released integer := 0;
begin
  perform ${s}.lock_queue(p_queue); -- positions are handed out under it (§10.8)
  for k in 1 .. cardinality(p_items) loop
    update ${s}.items i set in_flight = false, dirty = false, lease = 'finished', expires_ms = null,
        due_ms = null, due_order = null
      where i.queue = p_queue and i.item = p_items[k] and i.token = p_tokens[k] and i.lease = 'live';
    if found then
      insert into ${s}.queued (queue, item, queued_ms, position)
        values (p_queue, p_items[k], p_queued_ms[k], p_positions[k]);
      v_released := v_released + 1;
    end if;
  end loop;
  if v_released > 0 then perform pg_notify('${channel}', '+' || p_queue); end if; -- §20.10
  return v_released;
end $$;

-- §20.4: whether a call with token p_token may act on the item: while its lease is live — not once a later lease
-- was handed out, nor once this one expired or was done; token 0, a caller holding no lease, while no lease of the
-- item is live. A deleted row (§20.9) changes neither: its item was in flight under no lease. Locks the item's row,
-- creating it, so the caller's change is atomic; the caller tidies the row after.
create or replace function ${s}.fenced(p_queue text, p_item text, p_token bigint) returns boolean
language plpgsql as $$
declare r ${s}.items := ${s}.item_row(p_queue, p_item);
begin
  return (p_token = r.token and r.lease = 'live') or (p_token = 0 and not r.in_flight);
end $$;

-- A lease's end wakes only what waits for it: a drain, or a take while shutting down (§20.10); otherwise a done that
-- queues nothing gives a waiting take nothing to take.
create or replace function ${s}.ended(p_queue text) returns void
language plpgsql as $$
begin
  if ${s}.shutting_down(p_queue) then perform pg_notify('${channel}', p_queue); end if;
end $$;

-- §6. The common case is one statement that is its own fence (§20.4): it ends the live lease, not expired by now,
-- of an item not dirty and not due by now, and the row goes if the item is idle (§20.9). It settles nothing, as it
-- needs not: it queues nothing, and its answer and its change concern its own item only, whose lease and due time
-- it checks against now itself (§20.6: an in-flight item whose due time passed is dirty once settled, and its done
-- queues it again). Everything else — a dirty item, one due, token 0, a stale lease — takes the general path below.
-- Answers 'ok' or 'stale', and, when it ended a lease, how long the item was in flight (§19.4, §20.17).
create or replace function ${s}.done(p_queue text, p_item text, p_token bigint, p_now double precision)
returns table (answer text, worked_ms double precision)
language plpgsql as $$
declare v_now double precision := ${s}.clock(p_now); r record;
begin
  -- An item in flight is never queued, so once its lease ends it is idle when it has no failure and no due time:
  -- its row goes at once, one DELETE … RETURNING (what the UPDATE below and tidy would do, in one statement).
  delete from ${s}.items i
    where i.queue = p_queue and i.item = p_item and i.token = p_token and i.lease = 'live' and i.expires_ms > v_now
      and not i.dirty and i.due_ms is null and i.failures = 0
    returning v_now - i.leased_ms into worked_ms;
  if not found then
    update ${s}.items i set in_flight = false, lease = 'finished', expires_ms = null
      where i.queue = p_queue and i.item = p_item and i.token = p_token and i.lease = 'live' and i.expires_ms > v_now
        and not i.dirty and (i.due_ms is null or i.due_ms > v_now)
      returning v_now - i.leased_ms into worked_ms;
    if found then perform ${s}.tidy(p_queue, p_item); end if; -- its failures may have been forgotten meanwhile
  end if;
  if found then
    perform ${s}.ended(p_queue);
    answer := 'ok';
    return next;
    return;
  end if;
  perform ${s}.lock_queue(p_queue); -- a dirty item is queued again
  v_now := ${s}.clock(p_now);
  perform ${s}.settle(p_queue, v_now);
  if not ${s}.fenced(p_queue, p_item, p_token) then
    perform ${s}.tidy(p_queue, p_item);
    answer := 'stale';
    return next;
    return;
  end if;
  select * into r from ${s}.items where queue = p_queue and item = p_item;
  if r.in_flight then
    update ${s}.items set in_flight = false, lease = 'finished', expires_ms = null, dirty = false
      where queue = p_queue and item = p_item;
    if r.dirty then perform ${s}.enter(p_queue, p_item, v_now); end if; -- §6.2
    perform ${s}.ended(p_queue); -- a drain may be waiting for this done (§13.1)
    worked_ms := v_now - r.leased_ms;
  end if; -- §6.3: otherwise nothing changes
  perform ${s}.tidy(p_queue, p_item);
  answer := 'ok';
  return next;
end $$;

-- Each item of p_items with the place of its first call, as a JSON object: the batched calls' lookup of a row's call
-- by its item, a binary search (jsonb keeps an object's keys sorted), where array_position read the whole array.
create or replace function ${s}.first_places(p_items text[]) returns jsonb
language sql immutable as $$
  select coalesce(jsonb_object_agg(f.item, f.n), '{}') from (select u.item, min(u.n) as n
    from unnest(p_items) with ordinality u(item, n) where u.item is not null group by u.item) f
$$;

-- The dones a process sent together (§20.1): each as done answers it, in their order. Done's common case for all of
-- them at once, each item's first call only: one DELETE … RETURNING ends the live leases, not expired by now, of
-- items not dirty, with no failure and no due time, whose rows go (see done), and one UPDATE … RETURNING ends the
-- others of the common case; the remaining calls then go through done one by one, in their order. That is the
-- order done one by one would give: the common case concerns its own item only (see done), which no call on
-- another item changes, and every other call on the item comes after it.
create or replace function ${s}.done_many(p_queue text, p_items text[], p_tokens bigint[], p_now double precision)
returns table (answer text, worked_ms double precision)
language plpgsql as $$
declare v_now double precision := ${s}.clock(p_now); v_gone bigint[]; v_kept bigint[]; v_calls bigint[];
  v_worked double precision[]; v_items text[]; v_at int := 1; v_first jsonb;
begin
  -- Each row found by the primary key (a join with the arrays let the planner, misled by statistics taken while few
  -- leases were live, scan the table once per call), and matched with its item's first call by first_places, built
  -- once: array_position, once per row, read the whole array (a copy of it: PL/pgSQL holds array arguments
  -- expanded), quadratic in the calls.
  v_first := ${s}.first_places(p_items);
  with gone as (
    delete from ${s}.items i
      where i.queue = p_queue and i.item = any(p_items) and i.token = p_tokens[(v_first ->> i.item)::int]
        and i.lease = 'live' and i.expires_ms > v_now and not i.dirty and i.due_ms is null and i.failures = 0
      returning (v_first ->> i.item)::int as n, v_now - i.leased_ms as worked
  )
  select array_agg(g.n), array_agg(g.worked) into v_gone, v_worked from gone g;
  with kept as (
    update ${s}.items i set in_flight = false, lease = 'finished', expires_ms = null
      where i.queue = p_queue and i.item = any(p_items) and i.token = p_tokens[(v_first ->> i.item)::int]
        and i.lease = 'live' and i.expires_ms > v_now and not i.dirty and (i.due_ms is null or i.due_ms > v_now)
      returning (v_first ->> i.item)::int as n, v_now - i.leased_ms as worked, i.item
  )
  select array_agg(k.n), v_worked || array_agg(k.worked), array_agg(k.item) into v_kept, v_worked, v_items
    from kept k;
  if v_items is not null then
    delete from ${s}.items i where i.queue = p_queue and i.item = any(v_items) and not i.in_flight and not i.dirty
      and i.due_ms is null and i.failures = 0; -- tidy (§20.9): their failures may have been forgotten meanwhile
  end if;
  select array_agg(t.n order by t.n), array_agg(t.worked order by t.n) into v_calls, v_worked
    from unnest(coalesce(v_gone, '{}') || coalesce(v_kept, '{}'), v_worked) t(n, worked);
  if v_calls is not null then perform ${s}.ended(p_queue); end if;
  for i in 1 .. cardinality(p_items) loop
    if v_at <= coalesce(cardinality(v_calls), 0) and v_calls[v_at] = i then
      answer := 'ok';
      worked_ms := v_worked[v_at];
      v_at := v_at + 1;
      return next;
    else
      return query select * from ${s}.done(p_queue, p_items[i], p_tokens[i], p_now);
    end if;
  end loop;
end $$;

-- §7 and §12.4.
create or replace function ${s}.retry(p_queue text, p_item text, p_token bigint, p_now double precision,
    p_max_retries double precision, p_base double precision, p_max double precision) returns text
language plpgsql as $$
declare v_now double precision; v_failures bigint;
begin
  perform ${s}.lock_queue(p_queue);
  v_now := ${s}.clock(p_now);
  perform ${s}.settle(p_queue, v_now);
  if not ${s}.fenced(p_queue, p_item, p_token) then perform ${s}.tidy(p_queue, p_item); return 'stale'; end if;
  update ${s}.items set failures = failures + 1 where queue = p_queue and item = p_item
    returning failures into v_failures;
  if v_failures >= p_max_retries or ${s}.shutting_down(p_queue) then return 'gave up'; end if;
  perform ${s}.wait(p_queue, p_item, v_now, ${s}.backoff(v_failures, p_base, p_max)); -- §7.3
  return 'requeued';
end $$;

-- The retries a process sent together (§20.1): each as retry answers it, in their order.
create or replace function ${s}.retry_many(p_queue text, p_items text[], p_tokens bigint[], p_now double precision,
    p_max_retries double precision, p_base double precision, p_max double precision)
returns table (answer text)
language plpgsql as $$
begin
  for i in 1 .. cardinality(p_items) loop
    answer := ${s}.retry(p_queue, p_items[i], p_tokens[i], p_now, p_max_retries, p_base, p_max);
    return next;
  end loop;
end $$;

-- §8. A live lease, not expired by now, is one statement that is its own fence (§20.4): its item is in flight, so
-- its row stays, and nothing else changes (§20.6, as done's common case). With no failure counted, the common case
-- writes nothing (the forget changes nothing): it reads the lease live, and answers as at that read.
create or replace function ${s}.forget(p_queue text, p_item text, p_token bigint, p_now double precision) returns text
language plpgsql as $$
declare v_now double precision := ${s}.clock(p_now);
begin
  perform from ${s}.items i where i.queue = p_queue and i.item = p_item and i.token = p_token
    and i.lease = 'live' and i.expires_ms > v_now and i.failures < 1; -- "= 0" marks the deletions of idle rows (tidy)
  if found then return 'ok'; end if;
  update ${s}.items i set failures = 0 where i.queue = p_queue and i.item = p_item and i.token = p_token
    and i.lease = 'live' and i.expires_ms > v_now;
  if found then return 'ok'; end if;
  perform ${s}.settle(p_queue, v_now);
  if ${s}.fenced(p_queue, p_item, p_token) then
    update ${s}.items set failures = 0 where queue = p_queue and item = p_item;
    perform ${s}.tidy(p_queue, p_item);
    return 'ok';
  end if;
  perform ${s}.tidy(p_queue, p_item);
  return 'stale';
end $$;

-- The forgets a process sent together (§20.1): each as forget answers it, in their order. Forget's common case for
-- all of them at once, each item's first call only: one UPDATE clears the failures of the items whose live lease,
-- not expired by now, they carry (rows found by primary key, calls by first_places, as done_many does); the other
-- calls then go through forget one by one, in their order. No call changes another's answer: none ends a lease, and
-- a live lease not expired by now is not expired by a settle at now either. As in forget, the items with no failure
-- counted are read, not written: a worker's forget after a success, most often, costs no row version. The calls
-- answered are walked in order, as done_many's are (asking "i = any(calls)" per call was quadratic in the calls).
create or replace function ${s}.forget_many(p_queue text, p_items text[], p_tokens bigint[], p_now double precision)
returns table (answer text)
language plpgsql as $$
declare v_now double precision := ${s}.clock(p_now); v_calls bigint[]; v_first jsonb := ${s}.first_places(p_items);
  v_at int := 1;
begin
  select array_agg((v_first ->> i.item)::int) into v_calls from ${s}.items i
    where i.queue = p_queue and i.item = any(p_items) and i.token = p_tokens[(v_first ->> i.item)::int]
      and i.lease = 'live' and i.expires_ms > v_now and i.failures < 1; -- not "= 0": see forget
  with live as (
    update ${s}.items i set failures = 0
      where i.queue = p_queue and i.item = any(p_items) and i.token = p_tokens[(v_first ->> i.item)::int]
        and i.lease = 'live' and i.expires_ms > v_now and i.failures <> 0
      returning (v_first ->> i.item)::int as n
  )
  select coalesce(v_calls, '{}') || array_agg(l.n) into v_calls from live l;
  v_calls := array(select c.n from unnest(v_calls) c(n) order by c.n);
  for i in 1 .. cardinality(p_items) loop
    if v_at <= cardinality(v_calls) and v_calls[v_at] = i then
      answer := 'ok';
      v_at := v_at + 1;
    else
      answer := ${s}.forget(p_queue, p_items[i], p_tokens[i], p_now);
    end if;
    return next;
  end loop;
end $$;

-- A handled lease's forget and then its done (§8, §6), for the calls a process sent together (§20.1), in one
-- transaction (version 4): each call answers forget's answer (forgot) and, when forget accepted the lease, done's
-- (answer, worked_ms), as forget and then done, one after the other, would. Their common case for all of them at
-- once, each item's first call only: a live lease not expired by now is accepted by forget, which clears its
-- failures, so done's common case then ends it with no failure counted — one DELETE … RETURNING of the rows of the
-- items not dirty and with no due time (idle once done, §20.9), one UPDATE … RETURNING of the others not dirty and
-- not due by now (they keep their row: waiting). The remaining calls go through forget and done one by one, in their
-- order; the order argument is done_many's (the common case concerns its own item only).
create or replace function ${s}.finish_many(p_queue text, p_items text[], p_tokens bigint[], p_now double precision)
returns table (forgot text, answer text, worked_ms double precision)
language plpgsql as $$
declare v_now double precision := ${s}.clock(p_now); v_gone bigint[]; v_kept bigint[]; v_calls bigint[];
  v_worked double precision[]; v_at int := 1; v_first jsonb := ${s}.first_places(p_items);
begin
  with gone as (
    delete from ${s}.items i
      where i.queue = p_queue and i.item = any(p_items) and i.token = p_tokens[(v_first ->> i.item)::int]
        and i.lease = 'live' and i.expires_ms > v_now and not i.dirty and i.due_ms is null
      returning (v_first ->> i.item)::int as n, v_now - i.leased_ms as worked
  )
  select array_agg(g.n), array_agg(g.worked) into v_gone, v_worked from gone g;
  with kept as (
    update ${s}.items i set in_flight = false, lease = 'finished', expires_ms = null, failures = 0
      where i.queue = p_queue and i.item = any(p_items) and i.token = p_tokens[(v_first ->> i.item)::int]
        and i.lease = 'live' and i.expires_ms > v_now and not i.dirty and i.due_ms > v_now
      returning (v_first ->> i.item)::int as n, v_now - i.leased_ms as worked
  )
  select array_agg(k.n), v_worked || array_agg(k.worked) into v_kept, v_worked from kept k;
  select array_agg(t.n order by t.n), array_agg(t.worked order by t.n) into v_calls, v_worked
    from unnest(coalesce(v_gone, '{}') || coalesce(v_kept, '{}'), v_worked) t(n, worked);
  if v_calls is not null then perform ${s}.ended(p_queue); end if;
  for i in 1 .. cardinality(p_items) loop
    if v_at <= coalesce(cardinality(v_calls), 0) and v_calls[v_at] = i then
      forgot := 'ok';
      answer := 'ok';
      worked_ms := v_worked[v_at];
      v_at := v_at + 1;
    else
      forgot := ${s}.forget(p_queue, p_items[i], p_tokens[i], p_now);
      answer := null;
      worked_ms := null;
      if forgot = 'ok' then select d.answer, d.worked_ms into answer, worked_ms
        from ${s}.done(p_queue, p_items[i], p_tokens[i], p_now) d; end if;
    end if;
    return next;
  end loop;
end $$;

-- §20.5: a live lease lasts p_lease_ms more from now; the answer is its new expiry, or null when it is not live. A
-- live lease not expired by now is one statement that is its own fence (§20.4, §20.6, as done's common case).
create or replace function ${s}.extend(p_queue text, p_item text, p_token bigint, p_now double precision,
    p_lease_ms double precision) returns double precision
language plpgsql as $$
declare v_now double precision := ${s}.clock(p_now); v_expires double precision;
begin
  update ${s}.items i set expires_ms = v_now + p_lease_ms where i.queue = p_queue and i.item = p_item
    and i.token = p_token and i.lease = 'live' and i.expires_ms > v_now
    returning i.expires_ms into v_expires;
  if found then return v_expires; end if;
  perform ${s}.settle(p_queue, v_now);
  if not ${s}.fenced(p_queue, p_item, p_token) then perform ${s}.tidy(p_queue, p_item); return null; end if;
  update ${s}.items set expires_ms = v_now + p_lease_ms where queue = p_queue and item = p_item and in_flight
    returning expires_ms into v_expires;
  perform ${s}.tidy(p_queue, p_item); -- token 0 of an item with no lease: nothing to extend, and the row goes
  return v_expires;
end $$;

-- §9, §12.2 and §17.6, and the next expiry or due time, which a waiting take sets its timer by.
create or replace function ${s}.views(p_queue text, p_now double precision)
returns table (size bigint, in_flight bigint, waiting bigint, shutting_down boolean, next_event double precision)
language plpgsql as $$
begin
  perform ${s}.settle(p_queue, ${s}.clock(p_now));
  return query select
    (select count(*) from ${s}.queued q where q.queue = p_queue),
    (select count(*) from ${s}.items i where i.queue = p_queue and i.in_flight),
    (select count(*) from ${s}.items i where i.queue = p_queue and i.due_ms is not null),
    ${s}.shutting_down(p_queue),
    least((select min(i.expires_ms) from ${s}.items i where i.queue = p_queue and i.in_flight),
      (select min(i.due_ms) from ${s}.items i where i.queue = p_queue and i.due_ms is not null));
end $$;

-- §20.17: the gauges of §19.1, §19.5 and §19.6, computed now, and the leases of the queue that expired, in one
-- statement, after what happened by now was settled (as the views are).
create or replace function ${s}.metrics(p_queue text, p_now double precision)
returns table (depth bigint, unfinished_ms double precision, longest_ms double precision, expired bigint)
language plpgsql as $$
declare v_now double precision := ${s}.clock(p_now);
begin
  perform ${s}.settle(p_queue, v_now);
  return query select
    (select count(*) from ${s}.queued q where q.queue = p_queue),
    coalesce((select sum(v_now - i.leased_ms) from ${s}.items i where i.queue = p_queue and i.in_flight), 0),
    coalesce((select v_now - min(i.leased_ms) from ${s}.items i where i.queue = p_queue and i.in_flight), 0),
    coalesce((select q.expired from ${s}.queues q where q.name = p_queue), 0);
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

-- Version 1 kept the rows of idle items: they go now, as tidy would have deleted them (§20.9). A no-op after.
delete from ${s}.items i where not i.in_flight and not i.dirty and i.due_ms is null and i.failures = 0
  and not exists (select from ${s}.queued q where q.queue = i.queue and q.item = i.item);
`;
}

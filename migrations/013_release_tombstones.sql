-- A release that finds nothing reserved under its key writes a released row (a tombstone) so no
-- late reservation can take stock under that key (src/orders/stock.ts, releaseStock). The
-- release told its own tombstone from an allocation it flipped by comparing created_at with
-- released_at; two transactions that begin in the same microsecond have the same now(), and a
-- flipped allocation then looked like a tombstone and its units were never returned. The row now
-- says so itself.
--
-- A constant default adds the column without rewriting the table. Rows released before this
-- migration keep false: they are released, and a release never looks at them again.
alter table stock_allocations
  add column tombstone boolean not null default false,
  add constraint stock_allocations_tombstone_is_released check (not tombstone or state = 'released');

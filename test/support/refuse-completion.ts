// Test support: makes the test database refuse to mark orders completed, so the saga captures and
// then compensates with a refund.
import type { Queryable } from '../../src/platform/db/queryable.js';

/**
 * Makes this test database quietly refuse to mark orders completed: the update changes no row,
 * so the saga's confirmation finds the order not confirmable (OrderNotConfirmable, final) after
 * the capture, and the saga compensates by refunding what it captured. A stand-in for an order
 * that ends some other way while its saga is at the last step. With `orderId`, only that order is
 * refused (call once per order); without, every order is.
 */
export async function refuseCompletion(db: Queryable, options: { orderId?: string } = {}): Promise<void> {
  await db.query(`
    create table if not exists refused_completions (order_id text primary key);
    -- The trigger runs as whoever updates the order: the worker's login (migration 017).
    grant select on refused_completions to order_payments_worker;
    create or replace function refuse_completion() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from refused_completions where order_id in (new.order_id, '*')) then return null; end if;
      return new;
    end $$;
    drop trigger if exists refuse_completion on orders;
    create trigger refuse_completion before update of status on orders
      for each row when (new.status = 'completed') execute function refuse_completion();`);
  await db.query('insert into refused_completions values ($1) on conflict do nothing', [options.orderId ?? '*']);
}

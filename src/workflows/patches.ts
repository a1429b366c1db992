/**
 * The workflow's patches (`patched()` markers): each names one change to the saga's commands,
 * so executions that started before it replay and finish on the old shape.
 *
 * `hold-then-capture`: charge-first (charge, allocate, confirm) became hold-then-capture
 * (reserve, authorize, capture, confirm). Executions without the marker finish on the
 * charge-first shape. Once none is open, the call becomes `deprecatePatch` and the charge-first
 * code goes (CHANGELOG.md).
 */
export const HOLD_THEN_CAPTURE_PATCH = 'hold-then-capture';

/**
 * `reset-run-undoes-earlier-steps`: a run started by `temporal workflow reset` (its run ID is not
 * the original one) that fails or is cancelled registers every undo before compensating, not only
 * those of the steps it reached itself, because the run before the reset may have reserved, held
 * or captured under the same keys. Runs without the marker compensate as before.
 */
export const RESET_RUN_UNDOES_EARLIER_STEPS_PATCH = 'reset-run-undoes-earlier-steps';

/**
 * `confirmed-order-stays-confirmed`: a run that begins compensating and finds the order already
 * completed leaves it completed, whatever run it is. The confirmation can land without the run
 * hearing of it: its worker died after the commit, and the workflow was cancelled before a retry,
 * so the attempt timed out and the saga compensated a confirmed order (refunded its capture and
 * released its stock). Reset runs already did this under the patch above; runs without either
 * marker compensate as before.
 */
export const CONFIRMED_ORDER_STAYS_CONFIRMED_PATCH = 'confirmed-order-stays-confirmed';

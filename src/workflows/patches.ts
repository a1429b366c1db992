/**
 * The workflow's patches (`patched()` markers): each names one change to the saga's commands,
 * so executions that started before it replay and finish on the old shape.
 *
 * `hold-then-capture`: charge-first (charge, allocate, confirm) became hold-then-capture
 * (reserve, authorize, capture, confirm). Executions without the marker finish on the
 * charge-first shape. Once none is open, the call becomes `deprecatePatch` and the charge-first
 * code goes (README, "Migration notes").
 */
export const HOLD_THEN_CAPTURE_PATCH = 'hold-then-capture';

// The OrderId and OrderStatus search attributes that let the Web UI filter runs by order.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Lets the Web UI's list view filter runs by order: `OrderId = "A-1001"`. */
export const OrderIdAttribute = defineSearchAttributeKey('OrderId', SearchAttributeType.KEYWORD);
/** Lets the Web UI's list view filter runs by where the order stands: `OrderStatus = "needs_review"`. */
export const OrderStatusAttribute = defineSearchAttributeKey('OrderStatus', SearchAttributeType.KEYWORD);

export const ORDER_SEARCH_ATTRIBUTES = [OrderIdAttribute, OrderStatusAttribute];

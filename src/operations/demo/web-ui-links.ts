/** A run's page in the Temporal Web UI. */
export function runUrl(uiUrl: string, namespace: string, workflowId: string, runId: string): string {
  return `${uiUrl}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}/${encodeURIComponent(runId)}/history`;
}

/** The Web UI's workflow list, filtered by a visibility query such as `OrderStatus = "compensated"`. */
export function listUrl(uiUrl: string, namespace: string, query: string): string {
  return `${uiUrl}/namespaces/${encodeURIComponent(namespace)}/workflows?query=${encodeURIComponent(query)}`;
}

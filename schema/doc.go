// Package schema audits JSON Schemas (the inputSchema of an MCP tool, or a
// whole tools/list result) for input without a ceiling, and computes the
// worst-case size of a valid instance so that it can be checked against a
// [limits.Budget].
//
// Every list argument needs a ceiling: an array without maxItems, a string
// without maxLength, an object open to any number of members, a schema that
// accepts any value, and a recursive $ref all let a caller send input of any
// size, which a byte budget will then cut off with an error the caller
// cannot act on. [Audit] names each such place with its JSON Pointer into the
// schema document. A floor is not a ceiling: minItems and minLength are
// never required, so optional arguments that accept [] stay valid.
//
// [WorstCase] bounds the serialised size of any instance valid against a
// fully bounded schema, under the assumptions in [Options]; [CheckBudget]
// asserts that the largest request fits the transport's limits with a
// stated headroom, so that a cap the transport cannot carry is an error that
// names both numbers.
//
// [Audit], [WorstCase] and [AuditTool] share one walk of the document: a
// schema has findings exactly when it has no worst case. The walk visits
// each schema once, however many $refs lead to it, so its time is linear in
// the size of the document: a tools/list from an untrusted server cannot
// make it slow.
package schema

package mcpcore

// A Result is a tools/call result as the core sees it, whatever SDK
// carried it: an adapter lists the result's content items in order, each
// with its kind, and the structured content if the result has any.
type Result struct {
	// Content holds one item per content item of the result, in order.
	Content []Content
	// Structured is the result's structuredContent, as the SDK holds it
	// (any value encoding/json serializes); nil means none.
	Structured any
	// IsError is the result's isError.
	IsError bool
}

// ResultOf returns the Result of a tools/call result whose content items
// are items, each described by content, with its structured content (nil
// for none) and its isError: what an adapter calls to describe an SDK's
// result.
func ResultOf[C any](items []C, content func(C) Content, structured any, isError bool) Result {
	r := Result{Content: make([]Content, len(items)), Structured: structured, IsError: isError}
	for i, c := range items {
		r.Content[i] = content(c)
	}
	return r
}

// A Content is one content item of a [Result].
type Content struct {
	// Kind says what the item is to the core.
	Kind Kind
	// Text is the item's text when Kind is [Text]; ignored otherwise.
	Text string
}

// Kind is what a content item is to the core.
type Kind int

// The kinds of content items. Only [Text] is measured and cut; the others
// pass unchanged, [Image] also changing which client ceilings apply.
const (
	// Other is any item that is not text: audio, a resource link, an
	// embedded binary resource (or an embedded text resource with no
	// text).
	Other Kind = iota
	// Text is a text block or an embedded text resource with text.
	Text
	// Image is an image block.
	Image
)

// A Replacement says how an adapter rewrites a result that does not stay as
// it is: a copy of the result with no structured content, whose content
// items are one text block holding Text, then a resource_link for Link
// when it is not nil, then the items of the original result at the indexes
// Keep (the ones that are not text), in order; its isError is IsError. The
// result's other fields (its _meta) are kept.
type Replacement struct {
	Text    string
	Link    *Link
	Keep    []int
	IsError bool
}

// A Link is the resource_link of a kept result.
type Link struct {
	URI         string
	Name        string
	MIMEType    string
	Description string
	Size        int64 // UTF-8 bytes of the whole result
}

// replace returns the Replacement of the result whose text is t: text, then
// link, then the result's items that are not text, flagged isError.
func replace(t resultText, text string, link *Link, isError bool) *Replacement {
	return &Replacement{Text: text, Link: link, Keep: t.rest, IsError: isError}
}

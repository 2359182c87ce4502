package mcpbound

import (
	"time"

	"github.com/boundhttp/boundhttp/mcpcore"
)

// The names below moved to package github.com/boundhttp/boundhttp/mcpcore,
// the core this adapter and the mcp-go one share; they keep working here.

// Server and client defaults and bounds; see [mcpcore.ServerLimits] and
// [mcpcore.ClientLimits].
const (
	DefaultMaxResultChars = mcpcore.DefaultMaxResultChars
	MinResultChars        = mcpcore.MinResultChars
	DefaultWarnTokens     = mcpcore.DefaultWarnTokens
	DefaultMaxTokens      = mcpcore.DefaultMaxTokens
	DefaultMaxChars       = mcpcore.DefaultMaxChars
	DefaultHardMaxChars   = mcpcore.DefaultHardMaxChars
	DefaultMaxErrorChars  = mcpcore.DefaultMaxErrorChars
	DefaultMaxSpillBytes  = mcpcore.DefaultMaxSpillBytes
	MinClientChars        = mcpcore.MinClientChars
	MaxResultSizeCharsKey = mcpcore.MaxResultSizeCharsKey
)

// Links of kept results; see [mcpcore.ResultURIPrefix],
// [mcpcore.NextKey] and [mcpcore.NavigationKey].
const (
	ResultURIPrefix = mcpcore.ResultURIPrefix
	NextKey         = mcpcore.NextKey
	NavigationKey   = mcpcore.NavigationKey
)

// Store defaults; see [mcpcore.NewStore].
const (
	DefaultStoreBytes = mcpcore.DefaultStoreBytes
	DefaultStoreTTL   = mcpcore.DefaultStoreTTL
)

// Errors of a result store: the same values as mcpcore's, so errors.Is
// matches either.
var (
	ErrUnknownResult  = mcpcore.ErrUnknownResult
	ErrExpiredResult  = mcpcore.ErrExpiredResult
	ErrResultTooLarge = mcpcore.ErrResultTooLarge
	ErrNoSuchPage     = mcpcore.ErrNoSuchPage
)

// ResultStore is [mcpcore.ResultStore]: what keeps the results that
// ServerLimits does not send whole.
type ResultStore = mcpcore.ResultStore

// Store is [mcpcore.Store], the in-memory ResultStore.
type Store = mcpcore.Store

// NewStore is [mcpcore.NewStore]: a Store of at most maxBytes bytes in all,
// each result kept for ttl (zero means the defaults; negative panics).
func NewStore(maxBytes int64, ttl time.Duration) *Store { return mcpcore.NewStore(maxBytes, ttl) }

// Pager, PageArgs and Page are [mcpcore.Pager], [mcpcore.PageArgs] and
// [mcpcore.Page]: a list tool's bounded limit argument and opaque cursor.
type (
	Pager    = mcpcore.Pager
	PageArgs = mcpcore.PageArgs
	Page     = mcpcore.Page
)

// EstimateTokens is [mcpcore.EstimateTokens], the default token count of
// ClientLimits: one token per four characters, rounded up.
func EstimateTokens(s string) int { return mcpcore.EstimateTokens(s) }

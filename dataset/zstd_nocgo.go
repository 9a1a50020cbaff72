//go:build !cgo

package dataset

import (
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
)

// pageCodec compresses the pages of every file bagen-data writes. Without
// cgo it is parquet-go's pure-Go zstd encoder at its default level: the
// files read the same, but their bytes (and so the manifest's hashes)
// differ from those of a binary built with cgo, which uses libzstd.
var pageCodec compress.Codec = &parquet.Zstd

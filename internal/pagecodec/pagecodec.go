// Package pagecodec owns the compression of the pages of every parquet
// file bagen-data writes: which zstd encoder, at which level, and the name
// and version the build's manifest records, since the files' bytes (and so
// the manifest's digests) depend on them. Pages decompress with any zstd
// decoder; the files read the same whichever codec wrote them.
//
// Default is libzstd (the reference C library, built into the binary by
// cgo) where cgo is on, else Go, parquet-go's pure-Go encoder
// (klauspost/compress). BenchmarkEncode compares them on a build's pages;
// tools/buildbench compares whole builds.
package pagecodec

import (
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
)

// Codec is a page compressor and what it is. A Codec is safe for
// concurrent use.
type Codec struct {
	compress.Codec
	// Name says which encoder, version and level wrote the pages, e.g.
	// "zstd level 3, libzstd 1.5.7".
	Name string
}

// Go is parquet-go's pure-Go zstd encoder at its default level.
var Go = &Codec{Codec: &parquet.Zstd, Name: "zstd default level, klauspost/compress " + goZstdVersion}

// goZstdVersion is go.mod's klauspost/compress (TestGoZstdVersion checks
// it there: test binaries carry no module versions to read at run time).
const goZstdVersion = "v1.20.3"

//go:build cgo

package dataset

import (
	"sync"

	"github.com/DataDog/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/format"
)

// pageCodec compresses the pages of every file bagen-data writes: zstd at
// level 3 through libzstd (the reference C library, built into the binary
// by cgo). On 1 MiB pages of a build's message texts it compressed at
// about 690 MB/s against 460 MB/s for the pure-Go encoder at its default
// level, into 0.8% fewer bytes. Pages decompress with any zstd decoder;
// reading uses parquet-go's.
var pageCodec compress.Codec = &libzstd{level: 3}

type libzstd struct {
	level int
	ctxs  sync.Pool // of zstd.Ctx, which is not safe for concurrent use
}

func (c *libzstd) String() string                            { return "ZSTD" }
func (c *libzstd) CompressionCodec() format.CompressionCodec { return format.Zstd }

func (c *libzstd) Encode(dst, src []byte) ([]byte, error) {
	ctx, _ := c.ctxs.Get().(zstd.Ctx)
	if ctx == nil {
		ctx = zstd.NewCtx()
	}
	defer c.ctxs.Put(ctx)
	return ctx.CompressLevel(dst[:cap(dst)], src, c.level)
}

func (c *libzstd) Decode(dst, src []byte) ([]byte, error) { return parquet.Zstd.Decode(dst, src) }

/* SPDX-License-Identifier: MIT */
/*
 * test_slub_metadata.c - slub_debug's metadata accessors (slab/kasan.h),
 * which go a word at a time where the range allows: for every start
 * alignment and length up to a few words, metadata_memchr_inv() finds
 * exactly the first byte that differs (or none), metadata_memset() and
 * metadata_memcpy() write exactly the bytes of the range and leave their
 * neighbours alone.  A word loop that runs one word too far or stops one
 * short changes one of these.
 */
#include <string.h>

#include "slab/slab.h"
#include "slab/kasan.h"
#include "test.h"

#define BUF 128
#define MAXN 72
#define GUARD 0x5a

static _Alignas(16) unsigned char buf[BUF], src[BUF];

int main(void)
{
	for (unsigned int off = 0; off < 16; off++) {
		for (unsigned int n = 0; n <= MAXN; n++) {
			unsigned char *p = buf + off;

			/* memset: [p, p + n) only */
			memset(buf, GUARD, sizeof(buf));
			metadata_memset(p, 0xa5, n);
			for (unsigned int i = 0; i < BUF; i++) {
				bool in = i >= off && i < off + n;
				CHECK_MSG(buf[i] == (in ? 0xa5 : GUARD), "memset(+%u, %u): byte %u is %#x", off, n, i,
					  buf[i]);
			}

			/* memchr_inv: none different, then each byte in turn */
			CHECK_MSG(metadata_memchr_inv(p, 0xa5, n) == NULL, "memchr_inv(+%u, %u) of a uniform range", off, n);
			for (unsigned int bad = 0; bad < n; bad++) {
				p[bad] = 0xa4;
				unsigned char *f = metadata_memchr_inv(p, 0xa5, n);
				CHECK_MSG(f == p + bad, "memchr_inv(+%u, %u) with byte %u different: %+ld", off, n, bad,
					  f ? (long)(f - p) : -1L);
				if (bad + 1 < n) {              /* and a second one after it: still the first */
					p[n - 1] = 0;
					f = metadata_memchr_inv(p, 0xa5, n);
					CHECK_MSG(f == p + bad, "memchr_inv(+%u, %u) with bytes %u and %u different", off, n,
						  bad, n - 1);
					p[n - 1] = 0xa5;
				}
				p[bad] = 0xa5;
			}
			/* the guards around the range do not count */
			CHECK_MSG(metadata_memchr_inv(p, 0xa5, n) == NULL, "memchr_inv(+%u, %u) saw a byte outside", off, n);

			/* memcpy from every source alignment */
			for (unsigned int soff = 0; soff < 16; soff++) {
				for (unsigned int i = 0; i < BUF; i++)
					src[i] = (unsigned char)(i * 7 + 1);
				memset(buf, GUARD, sizeof(buf));
				metadata_memcpy(p, src + soff, n);
				for (unsigned int i = 0; i < BUF; i++) {
					bool in = i >= off && i < off + n;
					unsigned char want = in ? src[soff + i - off] : GUARD;
					if (buf[i] != want) {
						CHECK_MSG(buf[i] == want, "memcpy(+%u, src +%u, %u): byte %u is %#x, want %#x",
							  off, soff, n, i, buf[i], want);
						break;
					}
				}
			}
		}
	}
	TEST_DONE();
}

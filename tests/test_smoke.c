#include <string.h>
#include "mm/mm.h"
#include "test.h"

int main(void)
{
	struct mm_config c;
	char err[256];
	mm_config_default(&c);
	struct mm *mm = mm_create(&c, err, sizeof(err));
	REQUIRE(mm);
	CHECK_MM(mm, 3);
	struct page *p = alloc_pages(mm, GFP_KERNEL, 3);
	CHECK(p != NULL);
	memset(page_address(mm, p), 0xab, 8 * 4096);
	CHECK_MM(mm, 3);
	__free_pages(mm, p, 3);
	CHECK_MM(mm, 3);
	struct page *arr[64] = { 0 };
	unsigned long n = alloc_pages_bulk_array(mm, GFP_KERNEL, 64, arr);
	CHECK(n == 64);
	CHECK_MM(mm, 3);
	release_pages(mm, arr, 64);
	CHECK_MM(mm, 3);
	drain_all_pages(mm, NULL);
	CHECK_MM(mm, 3);
	mm_dump_zoneinfo(mm, stdout);
	mm_destroy(mm);
	TEST_DONE();
}

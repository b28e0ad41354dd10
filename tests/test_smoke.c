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
	mm_dump_buddyinfo(mm, stdout);
	struct page *p = alloc_pages(mm, GFP_KERNEL, 3);
	CHECK(p != NULL);
	memset(page_address(mm, p), 0xab, 8 * 4096);
	CHECK_MM(mm, 3);
	__free_pages(mm, p, 3);
	CHECK_MM(mm, 3);
	mm_dump_zoneinfo(mm, stdout);
	mm_dump_pagetypeinfo(mm, stdout);
	mm_destroy(mm);
	TEST_DONE();
}

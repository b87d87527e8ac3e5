/*
 * tests/unit/test_inputs.c - SHA-256 against the FIPS 180-4 / NIST example
 * values, and the list of input files (base/inputs.c).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "base/base.h"
#include "base/inputs.h"

static void test_sha256(void)
{
	char hex[65];
	vpa_sha256_hex("", 0, hex);
	CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	vpa_sha256_hex("abc", 3, hex);
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	/* 56 bytes: the padding needs a second block */
	static const char two[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	vpa_sha256_hex(two, strlen(two), hex);
	CHECK_STR(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	/* one million 'a' */
	char *a = malloc(1000000);
	memset(a, 'a', 1000000);
	vpa_sha256_hex(a, 1000000, hex);
	CHECK_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(a);
}

static void test_notes(void)
{
	char path[] = "/tmp/vpa_inputs_XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK(write(fd, "abc", 3) == 3);
	close(fd);
	struct vpa_err err;
	vpa_err_init(&err);
	char *d = NULL;
	size_t n = 0;
	/* off: nothing is noted */
	CHECK(vpa_read_file(path, &d, &n, &err) == 0);
	free(d);
	struct vpa_json *j = vpa_inputs_json();
	CHECK(j->n == 0);
	vpa_json_free(j);
	vpa_inputs_begin();
	CHECK(vpa_read_file(path, &d, &n, &err) == 0);
	free(d);
	CHECK(vpa_read_file(path, &d, &n, &err) == 0); /* read twice, noted once */
	free(d);
	vpa_input_note("/nonexistent/x", NULL, 0);    /* unreadable: not noted */
	j = vpa_inputs_json();
	CHECK(j->n == 1);
	if (j->n == 1) {
		CHECK_STR(vpa_json_get_str(j->items[0], "path"), path);
		CHECK(vpa_json_get_num(j->items[0], "bytes", 0) == 3);
		CHECK_STR(vpa_json_get_str(j->items[0], "sha256"),
			  "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	}
	vpa_json_free(j);
	vpa_inputs_end();
	unlink(path);
}

int main(void)
{
	RUN(test_sha256);
	RUN(test_notes);
	return DONE();
}

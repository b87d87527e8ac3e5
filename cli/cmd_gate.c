/* PLACEHOLDER during development: replaced by the real command. */
#include "cli/cli.h"
#include <stdio.h>
int cmd_gate(int argc, char **argv)
{
	(void)argc; (void)argv;
	fprintf(stderr, "vpaudit: error: 'gate' is not implemented yet\n");
	return 1;
}

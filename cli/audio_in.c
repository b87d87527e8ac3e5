/*
 * cli/audio_in.c - the shared audio-input options (cli/audio_in.h).
 */
#include <string.h>
#include <sys/stat.h>

#include "cli/audio_in.h"
#include "cli/cli.h"

int cli_audio_takes_value(const char *name)
{
	return !strcmp(name, "raw-format");
}

int cli_audio_opt(const char *cmd, const char *name, const char *val, struct cli_audio_in *a)
{
	if (!strcmp(name, "allow-downsample") || !strcmp(name, "allow-upsample")) {
		int bit = name[6] == 'd' ? VPA_ALLOW_DOWN : VPA_ALLOW_UP;
		if (strcmp(val, "true") && strcmp(val, "false"))
			return cli_usage_error(cmd, "--%s must be true or false, got '%s'", name, val);
		a->allow = !strcmp(val, "true") ? a->allow | bit : a->allow & ~bit;
		return 0;
	}
	if (!strcmp(name, "raw-format")) {
		struct vpa_err err;
		vpa_err_init(&err);
		if (vpa_rawfmt_parse(val, &a->raw, &err))
			return cli_usage_error(cmd, "%s", err.msg);
		return 0;
	}
	return 1;
}

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int cli_audio_open(char *const *inputs, size_t n, int channel, const struct cli_audio_in *a,
		   double rate, struct vpa_datadir *d)
{
	struct vpa_err err;
	vpa_err_init(&err);
	size_t il = strlen(inputs[0]);
	if (n == 1 && (is_dir(inputs[0]) || (il >= 4 && !strcmp(inputs[0] + il - 4, ".scp")))) {
		if (a->raw.sf_format) {
			vpa_fail(&err, VPA_EINPUT, NULL,
				 "--raw-format applies to audio files given directly; in %s write "
				 "'sox -t raw -r RATE -e ENC -b BITS FILE -t wav - |'",
				 inputs[0]);
			return cli_error(&err);
		}
		if (vpa_datadir_open(d, inputs[0], channel, &err)) {
			int rc = cli_error(&err);
			if (d->bad_line)
				cli_echo_line(d->bad_line);
			return rc;
		}
	} else {
		d->raw = a->raw;
		if (vpa_datadir_from_files(d, inputs, n, channel, &err))
			return cli_error(&err);
	}
	if (rate > 0)
		vpa_datadir_set_rate(d, rate, a->allow, 1);
	return 0;
}

/*
 * slurm_extra_conformance: Slurm's --extra parser and evaluator behind the
 * flux-conformance protocol (docs/protocol.md: one JSON object per line on
 * stdin and stdout).
 *
 * This file is flux-conformance's own code.  It contains no copy of Slurm: it
 * links against libslurmfull built from a Slurm source tree (build.sh) and
 * calls, for every case, the functions slurmctld calls:
 *
 *   extra_constraints_parse()    src/common/extra_constraints.c, as job_mgr.c
 *                                calls it on a submitted job's --extra;
 *   serialize_g_string_to_data() src/interfaces/serializer.c with the
 *                                serializer/json plugin (json-c), as node_mgr.c
 *                                turns a node's Extra into its extra_data;
 *   extra_constraints_test()     as node_scheduler.c's
 *                                _apply_extra_constraints() tests each node.
 *
 * The one rule not reached through Slurm's code is the length limit: slurmctld
 * checks strlen(extra) > 1024 in job_mgr.c (_test_strlen(job_desc->extra,
 * "extra", 1024)), a static function of the controller that a program cannot
 * link.  The same comparison is made here, before parsing, in the order the
 * controller makes them (the request is validated before the job is created).
 *
 * Usage: slurm_extra_conformance PLUGINDIR
 *   PLUGINDIR holds serializer_json.so (the build's lib/slurm).
 *
 * The protocol's own JSON (the messages, not a node's Extra) is read and
 * written with json-c in strict mode; a node's Extra is handed to Slurm as the
 * C string slurmctld would hold, so it stops at its first NUL byte, as does
 * the expression.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "src/common/data.h"
#include "src/common/extra_constraints.h"
#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/interfaces/serializer.h"

#ifndef SLURM_COMMIT
#define SLURM_COMMIT "unknown"
#endif

/* slurmctld's limit on a job's --extra (job_mgr.c, _test_strlen). */
#define EXTRA_MAX_LEN 1024

static const char *const operations[] = {
	"slurm.extra.match",
	"slurm.extra.parse",
	"slurm.extra.select",
};

/* The outcome of one case: exactly one of output, or error category. */
typedef struct {
	json_object *output;
	const char *category;
	char *message;
} outcome_t;

static void _fail(outcome_t *out, const char *category, const char *message)
{
	out->category = category;
	out->message = xstrdup(message);
}

/*
 * A protocol string as the C string Slurm would receive: json-c keeps
 * embedded NULs in the object, but every Slurm path (argv, RPC strings,
 * scontrol) ends the text at the first one.
 */
static const char *_cstring(json_object *obj)
{
	return json_object_get_string(obj);
}

/*
 * slurm.extra.parse's tree of a parsed expression (elem_t is public).
 * Slurm keeps a group for every parenthesis level, even around one term; the
 * operation's comparator replaces such a group by its child on both sides, and
 * so does this, which keeps the reply within the runner's nesting bound
 * (510 parentheses around one request is 511 levels in Slurm's tree).
 */
static json_object *_tree_to_json(elem_t *el)
{
	json_object *obj = json_object_new_object();

	while (el->num_children == 1)
		el = el->children[0];

	if (!el->num_children) {
		const char *cmp = "?";

		switch (el->operator) {
		case OP_LEAF_EQ:
			cmp = "=";
			break;
		case OP_LEAF_NE:
			cmp = "!=";
			break;
		case OP_LEAF_GT:
			cmp = ">";
			break;
		case OP_LEAF_GTE:
			cmp = ">=";
			break;
		case OP_LEAF_LT:
			cmp = "<";
			break;
		case OP_LEAF_LTE:
			cmp = "<=";
			break;
		default:
			break;
		}
		json_object_object_add(obj, "key",
				       json_object_new_string(el->key));
		json_object_object_add(obj, "comparison",
				       json_object_new_string(cmp));
		json_object_object_add(obj, "value",
				       json_object_new_string(el->value));
	} else {
		json_object *children = json_object_new_array();

		/*
		 * A parenthesised single term keeps OP_NONE; Slurm's
		 * evaluator treats it as AND (_test_extra_constraints).
		 */
		json_object_object_add(
			obj, "op",
			json_object_new_string(el->operator == OP_CHILD_OR ?
					       "or" : "and"));
		for (int i = 0; i < el->num_children; i++)
			json_object_array_add(children,
					      _tree_to_json(el->children[i]));
		json_object_object_add(obj, "children", children);
	}
	return obj;
}

/*
 * Length check, then Slurm's parser.  Returns the tree, or NULL with the
 * outcome's error set.
 */
static elem_t *_parse(const char *expression, outcome_t *out)
{
	elem_t *head = NULL;
	char *copy;
	int rc;

	if (strlen(expression) > EXTRA_MAX_LEN) {
		_fail(out, "length", "longer than 1024 bytes (slurmctld's _test_strlen)");
		return NULL;
	}
	copy = xstrdup(expression);
	rc = extra_constraints_parse(copy, &head);
	xfree(copy);
	if (rc != SLURM_SUCCESS) {
		FREE_NULL_EXTRA_CONSTRAINTS(head);
		_fail(out, "syntax", slurm_strerror(rc));
		return NULL;
	}
	return head;
}

/*
 * A node's extra_data as slurmctld builds it: NULL for no Extra or an empty
 * one (never matches); *bad set when the serializer refuses the text (scontrol
 * update is then refused, and a registering node keeps no extra_data).
 */
static data_t *_extra_data(json_object *extra, bool *bad)
{
	data_t *data = NULL;
	const char *text;

	*bad = false;
	if (json_object_is_type(extra, json_type_null))
		return NULL;
	text = _cstring(extra);
	if (!text[0])
		return NULL;
	if (serialize_g_string_to_data(&data, text, strlen(text),
				       MIME_TYPE_JSON)) {
		FREE_NULL_DATA(data);
		*bad = true;
		return NULL;
	}
	return data;
}

/* json-c holds a JSON null as a NULL pointer. */
static bool _is_string_or_null(json_object *obj)
{
	return !obj || json_object_is_type(obj, json_type_string);
}

/* An object with exactly the members `a` and `b` (schema check). */
static bool _has_exactly(json_object *input, const char *a, const char *b)
{
	return json_object_is_type(input, json_type_object) &&
	       json_object_object_length(input) == 2 &&
	       json_object_object_get_ex(input, a, NULL) &&
	       json_object_object_get_ex(input, b, NULL);
}

static void _op_parse(json_object *input, outcome_t *out)
{
	elem_t *head;

	if (!json_object_is_type(input, json_type_string)) {
		_fail(out, "invalid", "the input is not a string");
		return;
	}
	if (!(head = _parse(_cstring(input), out)))
		return;
	out->output = _tree_to_json(head);
	FREE_NULL_EXTRA_CONSTRAINTS(head);
}

static void _op_match(json_object *input, outcome_t *out)
{
	json_object *expression = NULL, *extra = NULL;
	elem_t *head;
	data_t *data;
	bool bad;

	if (!_has_exactly(input, "expression", "extra") ||
	    !json_object_object_get_ex(input, "expression", &expression) ||
	    !json_object_is_type(expression, json_type_string) ||
	    !json_object_object_get_ex(input, "extra", &extra) ||
	    !_is_string_or_null(extra)) {
		_fail(out, "invalid", "expected {expression: string, extra: string|null}");
		return;
	}
	if (!(head = _parse(_cstring(expression), out)))
		return;
	data = _extra_data(extra, &bad);
	if (bad) {
		_fail(out, "extra", "serializer/json refused the Extra");
	} else {
		/* node_scheduler.c clears a node without extra_data. */
		out->output = json_object_new_boolean(
			data && extra_constraints_test(head, data));
	}
	FREE_NULL_DATA(data);
	FREE_NULL_EXTRA_CONSTRAINTS(head);
}

static int _cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *) a, *(const char *const *) b);
}

static void _op_select(json_object *input, outcome_t *out)
{
	json_object *expression = NULL, *nodes = NULL, *result;
	const char **names;
	elem_t *head;
	size_t count = 0, total;

	if (!_has_exactly(input, "expression", "nodes") ||
	    !json_object_object_get_ex(input, "expression", &expression) ||
	    !json_object_is_type(expression, json_type_string) ||
	    !json_object_object_get_ex(input, "nodes", &nodes) ||
	    !json_object_is_type(nodes, json_type_object)) {
		_fail(out, "invalid", "expected {expression: string, nodes: object}");
		return;
	}
	json_object_object_foreach(nodes, name0, extra0) {
		(void) name0;
		if (!_is_string_or_null(extra0)) {
			_fail(out, "invalid", "a node's Extra is not a string or null");
			return;
		}
	}
	if (!(head = _parse(_cstring(expression), out)))
		return;

	total = json_object_object_length(nodes);
	names = xcalloc(total + 1, sizeof(*names));
	json_object_object_foreach(nodes, name, extra) {
		bool bad;
		data_t *data = _extra_data(extra, &bad);

		/* As _apply_extra_constraints(): no extra_data, no match. */
		if (data && extra_constraints_test(head, data))
			names[count++] = name;
		FREE_NULL_DATA(data);
	}
	/* The suite's order: by code point, which is UTF-8 byte order. */
	qsort(names, count, sizeof(*names), _cmp_names);
	result = json_object_new_array();
	for (size_t i = 0; i < count; i++)
		json_object_array_add(result, json_object_new_string(names[i]));
	xfree(names);
	out->output = result;
	FREE_NULL_EXTRA_CONSTRAINTS(head);
}

static void _write(json_object *reply)
{
	const char *line = json_object_to_json_string_ext(
		reply, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);

	fputs(line, stdout);
	fputc('\n', stdout);
	fflush(stdout);
	json_object_put(reply);
}

static void _hello(void)
{
	json_object *reply = json_object_new_object();
	json_object *impl = json_object_new_object();
	json_object *ops = json_object_new_array();
	char *version = xstrdup_printf("%s (%s), json-c %s",
				       SLURM_VERSION_STRING, SLURM_COMMIT,
				       json_c_version());

	json_object_object_add(impl, "name",
			       json_object_new_string("slurm-extra"));
	json_object_object_add(impl, "version",
			       json_object_new_string(version));
	for (size_t i = 0; i < ARRAY_SIZE(operations); i++)
		json_object_array_add(ops, json_object_new_string(operations[i]));
	json_object_object_add(reply, "protocol", json_object_new_int(1));
	json_object_object_add(reply, "implementation", impl);
	json_object_object_add(reply, "operations", ops);
	xfree(version);
	_write(reply);
}

static void _run(json_object *msg)
{
	json_object *seq = NULL, *op = NULL, *input = NULL;
	json_object *reply = json_object_new_object();
	outcome_t out = { 0 };
	const char *name;

	json_object_object_get_ex(msg, "seq", &seq);
	json_object_object_get_ex(msg, "operation", &op);
	json_object_object_get_ex(msg, "input", &input);
	name = op ? json_object_get_string(op) : "";

	json_object_object_add(reply, "seq", json_object_get(seq));
	if (!xstrcmp(name, "slurm.extra.parse")) {
		_op_parse(input, &out);
	} else if (!xstrcmp(name, "slurm.extra.match")) {
		_op_match(input, &out);
	} else if (!xstrcmp(name, "slurm.extra.select")) {
		_op_select(input, &out);
	} else {
		json_object *why = json_object_new_object();

		json_object_object_add(
			why, "reason",
			json_object_new_string("Slurm's extra constraints only"));
		json_object_object_add(reply, "unsupported", why);
		_write(reply);
		return;
	}
	if (out.category) {
		json_object *err = json_object_new_object();

		json_object_object_add(err, "category",
				       json_object_new_string(out.category));
		json_object_object_add(err, "message",
				       json_object_new_string(out.message));
		json_object_object_add(reply, "error", err);
		xfree(out.message);
	} else {
		json_object_object_add(reply, "output", out.output);
	}
	_write(reply);
}

int main(int argc, char **argv)
{
	log_options_t logopts = LOG_OPTS_STDERR_ONLY;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	if (argc != 2) {
		fprintf(stderr, "usage: %s PLUGINDIR\n", argv[0]);
		return 2;
	}
	/* Slurm's errors (a refused expression or Extra) go to stderr. */
	logopts.stderr_level = LOG_LEVEL_ERROR;
	log_init(argv[0], logopts, 0, NULL);

	/*
	 * What slurmctld has after reading slurm.conf with
	 * SchedulerParameters=extra_constraints: the plugin directory, and
	 * extra constraints switched on (read_config.c), which makes it
	 * require the JSON serializer (controller.c).
	 */
	slurm_conf.plugindir = xstrdup(argv[1]);
	slurm_conf.serializer_plugins = xstrdup("serializer/json");
	extra_constraints_set_parsing(true);
	serializer_required(MIME_TYPE_JSON);

	while ((len = getline(&line, &cap, stdin)) >= 0) {
		struct json_tokener *tok = json_tokener_new_ex(1000);
		json_object *msg, *cmd = NULL;
		const char *name;

		json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
		msg = json_tokener_parse_ex(tok, line, (int) len);
		json_tokener_free(tok);
		if (!msg || !json_object_is_type(msg, json_type_object)) {
			fprintf(stderr, "not a JSON object: %.200s\n", line);
			json_object_put(msg);
			return 1;
		}
		json_object_object_get_ex(msg, "cmd", &cmd);
		name = cmd ? json_object_get_string(cmd) : "";
		if (!xstrcmp(name, "hello")) {
			_hello();
		} else if (!xstrcmp(name, "run")) {
			_run(msg);
		} else if (!xstrcmp(name, "stop")) {
			json_object_put(msg);
			break;
		} else {
			fprintf(stderr, "unknown command: %.200s\n", line);
		}
		json_object_put(msg);
	}
	free(line);
	return 0;
}

/*
 * test_analyzer_aten_ops.c — PyTorch operations from native frames
 * (analyzer/load/aten_ops.c): demangled and mangled entries, call and
 * redispatch, what is no entry; why a sync inside one reads the GPU; the
 * words explain uses.  The symbols are those of the H100 trace of c54
 * (boolean-mask indexing) and of c21 (.item()).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../analyzer/load/aten_ops.h"

#include <string.h>

static void entries(void **state)
{
	(void)state;
	char b[100];
	assert_true(ia_aten_op("_ZN2at4_ops7nonzero4callERKNS_6TensorE", b, sizeof b));
	assert_string_equal(b, "nonzero");
	assert_true(ia_aten_op("_ZN2at4_ops12index_Tensor10redispatchEN3c1014DispatchKeySetERKNS_6TensorE", b, sizeof b));
	assert_string_equal(b, "index_Tensor");
	assert_true(ia_aten_op("at::_ops::_local_scalar_dense::call(at::Tensor const&)", b, sizeof b));
	assert_string_equal(b, "_local_scalar_dense");
	assert_true(ia_aten_op("at::_ops::mul_Scalar::redispatch(c10::DispatchKeySet, at::Tensor const&)", b, sizeof b));
	assert_string_equal(b, "mul_Scalar");
	/* not an operation's entry: the kernels and helpers under it */
	assert_false(ia_aten_op("_ZN2at6native12nonzero_cudaERKNS_6TensorE", b, sizeof b));
	assert_false(ia_aten_op("at::native::structured_addmm_out_cuda::impl(at::Tensor const&)", b, sizeof b));
	assert_false(ia_aten_op("at::_ops::nonzero::schema_str", b, sizeof b));
	assert_false(ia_aten_op("_ZN2at4_ops7nonzero11schema_strE", b, sizeof b));
	assert_false(ia_aten_op("_ZN2at4_ops999nonzero4call", b, sizeof b));   /* a length past the symbol */
	assert_false(ia_aten_op("_ZN2at4_ops", b, sizeof b));
	assert_false(ia_aten_op(NULL, b, sizeof b));
}

static void why_it_syncs(void **state)
{
	(void)state;
	assert_int_equal(ia_aten_sync_kind("nonzero", "index_Tensor"), IA_ATEN_SYNC_SIZE);
	assert_int_equal(ia_aten_sync_kind("nonzero", "_index_put_impl_"), IA_ATEN_SYNC_SIZE);
	assert_int_equal(ia_aten_sync_kind("masked_select", NULL), IA_ATEN_SYNC_SIZE);
	assert_int_equal(ia_aten_sync_kind("_unique2", "unique"), IA_ATEN_SYNC_SIZE);
	assert_int_equal(ia_aten_sync_kind("nonzero_static", NULL), IA_ATEN_SYNC_NONE);   /* its size is given */
	assert_int_equal(ia_aten_sync_kind("_local_scalar_dense", "item"), IA_ATEN_SYNC_SCALAR);
	assert_int_equal(ia_aten_sync_kind("_local_scalar_dense", "is_nonzero"), IA_ATEN_SYNC_SCALAR);
	assert_int_equal(ia_aten_sync_kind("_to_copy", "to_dtype_layout"), IA_ATEN_SYNC_COPY);
	assert_int_equal(ia_aten_sync_kind("addmm", "linear"), IA_ATEN_SYNC_NONE);
	assert_int_equal(ia_aten_sync_kind("to_dense", NULL), IA_ATEN_SYNC_NONE);   /* not a copy to the host */
	assert_int_equal(ia_aten_sync_kind(NULL, NULL), IA_ATEN_SYNC_NONE);
}

static void words(void **state)
{
	(void)state;
	char b[200];
	assert_string_equal(ia_aten_describe("nonzero", "index_Tensor", b, sizeof b),
			    "boolean-mask indexing (x[mask]): aten::nonzero inside aten::index_Tensor");
	assert_string_equal(ia_aten_describe("_local_scalar_dense", "_local_scalar_dense", b, sizeof b),
			    ".item() (or float(t), int(t)): aten::_local_scalar_dense");
	assert_string_equal(ia_aten_describe("nonzero", "weird_op", b, sizeof b), "aten::nonzero inside aten::weird_op");
	assert_string_equal(ia_aten_describe("nonzero", NULL, b, sizeof b), "nonzero: aten::nonzero");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(entries),
		cmocka_unit_test(why_it_syncs),
		cmocka_unit_test(words),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

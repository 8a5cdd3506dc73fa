/*
 * nvtx_abi.h — what of NVIDIA's NVTX v3 ABI (nvToolsExt.h, nvtxTypes.h) the
 * library uses as NVTX's tool (nvtx_hooks.c): the callback tables an
 * injection library fills, the slots' ids, the event attributes.  Declared
 * here, ABI-identical to NVIDIA's headers, as hooks.h declares CUDA's: the
 * product does not include them.
 */
#ifndef INGERO_PRELOAD_NVTX_ABI_H
#define INGERO_PRELOAD_NVTX_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef void (*nvtx_fn)(void);
typedef nvtx_fn **nvtx_table;          /* NvtxFunctionTable: pointers to the slots */
typedef const void *(*nvtx_get_export_table)(uint32_t id);
struct nvtx_callbacks {                /* NvtxExportTableCallbacks */
	size_t size;
	int (*get_module_table)(int module, nvtx_table *table, unsigned int *size);
};
#define NVTX_ETID_CALLBACKS 1
#define NVTX_CB_MODULE_CORE 1
#define NVTX_CB_MODULE_CORE2 5
enum {                                 /* NVTX_CBID_CORE_* */
	CORE_MarkEx = 1, CORE_MarkA = 2, CORE_MarkW = 3, CORE_RangeStartEx = 4, CORE_RangeStartA = 5,
	CORE_RangeStartW = 6, CORE_RangeEnd = 7, CORE_RangePushEx = 8, CORE_RangePushA = 9,
	CORE_RangePushW = 10, CORE_RangePop = 11,
};
enum {                                 /* NVTX_CBID_CORE2_* */
	CORE2_DomainMarkEx = 1, CORE2_DomainRangeStartEx = 2, CORE2_DomainRangeEnd = 3,
	CORE2_DomainRangePushEx = 4, CORE2_DomainRangePop = 5, CORE2_DomainRegisterStringA = 10,
	CORE2_DomainRegisterStringW = 11, CORE2_DomainCreateA = 12, CORE2_DomainCreateW = 13,
};
enum { MSG_ASCII = 1, MSG_UNICODE = 2, MSG_REGISTERED = 3 };   /* nvtxMessageType_t */
struct nvtx_attr {                     /* nvtxEventAttributes_t (v2, 48 bytes) */
	uint16_t version, size;
	uint32_t category;
	int32_t color_type;
	uint32_t color;
	int32_t payload_type;
	int32_t reserved0;
	uint64_t payload;
	int32_t message_type;
	const void *message;           /* ascii, unicode or a registered handle */
};
typedef const void *nvtx_domain;       /* NULL: the default domain */
typedef uint64_t nvtx_range_id;

#endif

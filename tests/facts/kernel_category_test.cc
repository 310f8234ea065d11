// Kernel category rules (docs/analyses/kernel_categories.md) on real kernel names: from the traces
// in ../shared/traces (nsys and Kineto exports of PyTorch, vLLM, HF, HTA jobs) and from public
// profiles of cuBLAS, CUTLASS, FlashAttention, FlashInfer, cuDNN, NCCL, TensorRT(-LLM) and Triton.
#include "facts/kernel_category.h"

#include <gtest/gtest.h>

#include <string>

namespace sightline {
namespace {

struct Case {
  const char* name;
  KernelCategory expected;
};

using enum KernelCategory;

constexpr Case kCases[] = {
    // cuBLAS / cuBLASLt / nvjet / gemv
    {"ampere_sgemm_128x64_nn", kGemm},
    {"volta_sgemm_32x32_sliced1x4_tn", kGemm},
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
     "segment_k_off_kernel__5x_cublas",
     kGemm},
    {"sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize96x128x32_stage4_warpsize2x2x1_tensor16x8x16_"
     "kernel_trt",
     kGemm},
    {"nvjet_tst_144x128_64x6_2x1_v_bz_bias_TNN", kGemm},
    {"nvjet_hsh_256x128_64x4_2x1_v_bz_coopA_NTN", kGemm},
    {"void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, true, false, "
     "false>(cublasLt::cublasSplitKParams<float>, float const*, float const*, float*)",
     kGemm},
    {"void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 2, 2, false, false, "
     "cublasGemvParams<cublasGemvTensorStridedBatched<float const>, "
     "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, "
     "float> >(cublasGemvParams<cublasGemvTensorStridedBatched<float const>, "
     "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>, "
     "float, float)",
     kGemm},
    {"std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, float, float, float, "
     "float, false, true, false, false, 7, cublasGemvParams<cublasGemvTensorStridedBatched<float "
     "const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, "
     "float> >(cublasGemvParams<cublasGemvTensorStridedBatched<float const>, "
     "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>)",
     kGemm},
    {"void epilogue::impl::globalKernel<float, float, float, true, true>(int, int, long, float*, "
     "cublasLtEpilogue_t, int, float*, long, void*, long, long, long, float*, long, int*)",
     kGemm},
    {"bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_"
     "transOut_schedP2x1x2x3_biasM_bN_tmaOpt_clmp_dynBatch_sm100f",
     kGemm},
    // CUTLASS and cuDNN convolutions
    {"void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(cutlass_80_simt_sgemm_"
     "128x32_8x5_nn_align1::Params)",
     kGemm},
    {"cutlass_80_tensorop_f16_s16816gemm_relu_f16_64x64_32x6_tn_align8", kGemm},
    {"void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, "
     "int>, cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm90TmaGmmaWarp"
     "SpecializedCooperative<4, cute::tuple<cute::C<2>, cute::C<1>, cute::C<1> >, "
     "cutlass::gemm::KernelTmaWarpSpecializedCooperative> > > >(T1::Params)",
     kGemm},
    {"void "
     "cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688fprop_optimized_tf32_128x128_16x4_nhwc_"
     "align4>(cutlass_tensorop_s1688fprop_optimized_tf32_128x128_16x4_nhwc_align4::Params)",
     kGemm},
    {"sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32_stage5_"
     "warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer",
     kGemm},
    {"cudnn_infer_ampere_scudnn_128x64_relu_xregs_large_nn_v1", kGemm},
    {"void fused_moe_kernel", kGemm},
    {"void marlin::Marlin<(__nv_bfloat16)0, 256, 4, 8, 8, 4, 8, false>(int4 const*, int4 const*, "
     "int4*, int4 const*, int, int, int, int*)",
     kGemm},
    // Attention
    {"void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, "
     "false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, "
     "cutlass::bfloat16_t> >, false, true, false, false, true, true, false, "
     "false>(pytorch_flash::Flash_fwd_params)",
     kAttention},
    {"void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, "
     "cutlass::half_t, Flash_kernel_traits<128, 64, 128, 4, cutlass::half_t> >, false, true, "
     "false, false, true, false, false, false>(flash::Flash_fwd_params)",
     kAttention},
    {"void flashinfer::BatchPrefillWithPagedKVCacheKernel<(flashinfer::MaskMode)1, "
     "(flashinfer::PosEncodingMode)0, 1u, 4u, 8u, 1u, 4u, (flashinfer::SwizzleMode)0, "
     "__half, __half, __half, float, int>(int*, int*, int*, int*)",
     kAttention},
    {"void flashinfer::BatchDecodeWithPagedKVCacheKernel<(flashinfer::PosEncodingMode)0, 2u, 4u, "
     "8u, 8u, 1u, 4u, __half, __half, __half, int>(__half*, int*)",
     kAttention},
    {"void flashinfer::MergeStatesKernel<8u, 16u, 8u, 4u, __half, __half>(__half*, float*, "
     "__half*, "
     "float*, unsigned int, unsigned int)",
     kAttention},
    {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x64x128_4x1x1_kernel0_0",
     kAttention},
    {"fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext",
     kAttention},
    {"fmha_v2_flash_attention_fp16_64_128_S_qkv_128_causal_sm89_kernel_nl_tiled", kAttention},
    {"void vllm::paged_attention_v1_kernel<unsigned short, unsigned short, 128, 16, 128, "
     "(vllm::Fp8KVCacheDataType)0, false>(unsigned short*, unsigned short const*)",
     kAttention},
    {"void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char, "
     "(vllm::Fp8KVCacheDataType)1>(__nv_bfloat16 const*, __nv_bfloat16 const*, unsigned char*, "
     "unsigned char*, long const*, long, long, long, long, long, int, int, int, float const*, "
     "float const*)",
     kAttention},
    {"void tensorrt_llm::kernels::mmha::masked_multihead_attention_kernel<unsigned short, unsigned "
     "short, unsigned short, 128, 64, 128, true, false, false, false, false, false, 4, "
     "false>(tensorrt_llm::kernels::Multihead_attention_params<unsigned short, false>)",
     kAttention},
    {"void cutlass::Kernel<cutlass_tensorop_f16_s16816fmha_64x64_sm80>(Params)", kAttention},
    // Normalization
    {"std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type "
     "vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long, c10::BFloat16*, "
     "c10::BFloat16 const*, float, int, int)",
     kNormalization},
    {"void vllm::rms_norm_kernel<c10::BFloat16, 8, 2>(c10::BFloat16*, c10::BFloat16 const*, long, "
     "long, long, long, long, c10::BFloat16 const*, float, int, int)",
     kNormalization},
    {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, "
     "float, float const*, float const*, float const*, float*, float*, float*)",
     kNormalization},
    {"void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<float, float>(long, float, "
     "float const*, float*, float*)",
     kNormalization},
    {"void flashinfer::norm::FusedAddRMSNormKernel<8u, __half>(__half*, __half*, __half*, "
     "unsigned int, unsigned int, float)",
     kNormalization},
    {"void cudnn::bn_fw_tr_1C11_singleread<float, 512, true, 1, 2, 0>(cudnn::bn_fw_tr_1C11_args<"
     "float>)",
     kNormalization},
    // Elementwise (PyTorch functors, activations, RoPE, RNG)
    {"void at::native::vectorized_elementwise_kernel<4, "
     "at::native::CUDAFunctor_add<c10::BFloat16>, "
     "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, "
     "3ul>)",
     kElementwise},
    {"void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous "
     "namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() "
     "const::{lambda()#6}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> "
     ">(int, at::native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}"
     "::operator()() const::{lambda()#6}::operator()() const::{lambda(c10::BFloat16)#1}, "
     "std::array<char*, 2ul>)",
     kElementwise},
    {"void at::native::vectorized_elementwise_kernel<4, at::native::rsqrt_kernel_cuda(at::"
     "TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() "
     "const::{lambda(float)#1}, std::array<char*, 2ul> >(int, float, std::array<char*, 2ul>)",
     kElementwise},
    {"void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, "
     "c10::BFloat16*, c10::BFloat16 const*, int, long, long, long, int, int, int)",
     kElementwise},
    {"void vllm::act_and_mul_kernel<c10::BFloat16, &(c10::BFloat16 vllm::silu_kernel<c10::"
     "BFloat16>(c10::BFloat16 const&)), true>(c10::BFloat16*, c10::BFloat16 const*, int)",
     kElementwise},
    {"void at::native::<unnamed>::distribution_elementwise_grid_stride_kernel<float, (int)4, void "
     "at::native::templates::cuda::normal_and_transform<float, float, at::CUDAGeneratorImpl *, "
     "void at::native::templates::cuda::normal_kernel<at::CUDAGeneratorImpl *>(const "
     "at::TensorBase &, double, double, T1)::[lambda() (instance 1)]::operator ()() "
     "const::[lambda() (instance 2)]::operator ()() const::[lambda(float) (instance 1)]>(at::"
     "TensorIteratorBase &, T3, T4)::[lambda(curandStatePhilox4_32_10 *) (instance 2)]>(long, "
     "at::PhiloxCudaState, T3, T4)",
     kElementwise},
    {"void (anonymous namespace)::elementwise_kernel_with_index<int, at::native::arange_cuda_out("
     "c10::Scalar const&, c10::Scalar const&, c10::Scalar const&, at::Tensor&)::{lambda()#1}::"
     "operator()() const::{lambda()#4}::operator()() const::{lambda(long)#1}>(int, int, "
     "function_traits<int>::result_type*)",
     kElementwise},
    {"void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, float, float, "
     "float, float, float, float, adamMode_t, float, int, int>(int, int volatile*, "
     "TensorListMetadata<4>, AdamFunctor<float>, float, float, float, float)",
     kElementwise},
    {"generatedNativePointwise", kElementwise},
    // Reductions and softmax
    {"void <unnamed>::softmax_warp_forward<float, float, float, (int)11, (bool)0, (bool)0>(T2 *, "
     "const T1 *, int, int, int, const bool *, int, bool)",
     kReduction},
    {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
     "at::native::MeanOps<float, "
     "float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, "
     "at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)",
     kReduction},
    {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
     "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
     kReduction},
    {"void cub::DeviceScanKernel<cub::AgentScanPolicy<128, 15, int, (cub::BlockLoadAlgorithm)3, "
     "(cub::CacheLoadModifier)0, (cub::BlockStoreAlgorithm)3, (cub::BlockScanAlgorithm)2, "
     "cub::MemBoundScaling<128, 15, int> >, int*, int*, cub::ScanTileState<int, true>, cub::Sum, "
     "cub::NullType, int>(int*, int*, cub::ScanTileState<int, true>, int, cub::Sum, cub::NullType, "
     "int)",
     kReduction},
    {"void flashinfer::sampling::TopKTopPSamplingFromProbKernel<1024u, "
     "(cub::BlockScanAlgorithm)0, (cub::BlockReduceAlgorithm)2, 4u, false, float, int>(float*, "
     "int*, int*, float*, int*, float*, int*, unsigned int, unsigned int, unsigned int*)",
     kReduction},
    // MoE routing (top-k experts, per-expert histograms) and finalize (weighted combine)
    {"void moe::dev::routing::routingIndicesHistogramKernel<moe::dev::routing::routingRenormalize::"
     "KernelParams<__nv_bfloat16, __nv_bfloat16, 128, false, true, true> >(moe::dev::routing::"
     "routingRenormalize::KernelParams<__nv_bfloat16, __nv_bfloat16, 128, false, true, true>)",
     kReduction},
    {"void moe::dev::finalize::finalizeKernelVecLoad<moe::dev::finalize::KernelParams<cutlass::"
     "bfloat16_t, cutlass::bfloat16_t, 4, true> >(moe::dev::finalize::KernelParams<cutlass::"
     "bfloat16_t, cutlass::bfloat16_t, 4, true>)",
     kReduction},
    {"void vllm::moe::moe_align_block_size_kernel<int>(int const*, int*, int*, int*, int, int, "
     "int, "
     "int, unsigned long, int*)",
     kReduction},
    // Communication
    {"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", kCommunication},
    {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", kCommunication},
    {"ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
     kCommunication},
    {"void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, "
     "unsigned long, unsigned int**, unsigned long, unsigned long)",
     kCommunication},
    {"void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, "
     "vllm::Signal*, __nv_bfloat16*, int, int)",
     kCommunication},
    {"void tensorrt_llm::kernels::ar_fusion::allreduce_fusion_kernel_oneshot_lamport<__nv_"
     "bfloat16, 8, 4, (tensorrt_llm::kernels::ar_fusion::AllReduceFusionPattern)1, "
     "true>(tensorrt_llm::kernels::ar_fusion::AllReduceFusionParams)",
     kCommunication},
    // Copies, fills, gathers
    {"void at::native::vectorized_elementwise_kernel<8, at::native::FillFunctor<c10::BFloat16>, "
     "std::array<char*, 1ul> >(int, at::native::FillFunctor<c10::BFloat16>, std::array<char*, "
     "1ul>)",
     kCopyMemset},
    {"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::"
     "TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() "
     "const::{lambda(float)#1}, std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, unsigned "
     "int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithoutCast, "
     "at::native::memory::StoreWithoutCast>(int, float, std::array<char*, 2ul>)",
     kCopyMemset},
    {"void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 2, 128, "
     "1>(float*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<float, unsigned "
     "int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, "
     "unsigned int)",
     kCopyMemset},
    {"void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<at::native::"
     "index_kernel_impl<at::native::OpaqueType<2> >(at::TensorIteratorBase&, c10::ArrayRef<long>, "
     "c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1}>(at::TensorIteratorBase&, "
     "c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::"
     "OpaqueType<2> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda("
     "char*, char const*, long)#1} const&, bool)::{lambda(int)#1}>(long, long)",
     kCopyMemset},
    {"void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned "
     "int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, "
     "at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, "
     "at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned "
     "int, long)",
     kCopyMemset},
    {"void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, "
     "long, long, bool)",
     kCopyMemset},
    {"void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, "
     "(cudnnKernelDataType_t)2>(cudnn::ops::nchw2nhwc_params_t<float>, float const*, float*)",
     kCopyMemset},
    {"void genericReformat::copyPackedKernel<float, float, false, true, "
     "genericReformat::IdentityCoordMapper<4>, 4>(unsigned int, unsigned int, void const*, "
     "genericReformat::ArrayN<4>, genericReformat::ArrayNWithReducedDivisors<4>, "
     "genericReformat::ArrayN<4>, int, int, int, float const*, void*)",
     kCopyMemset},
    {"void fbgemm_gpu::permute_2D_data_kernel<false, int, int, decltype(nullptr)>(int, int, int, "
     "int const*, decltype(nullptr) const*, int const*, int const*, int const*, int*, "
     "decltype(nullptr)*)",
     kCopyMemset},
    {"_copy_page_indices_kernel", kCopyMemset},
    // Quantization
    {"void vllm::scaled_fp8_quant_kernel_strided<c10::BFloat16, c10::Float8_e4m3fn>(c10::Float8_"
     "e4m3fn*, c10::BFloat16 const*, float const*, int, long, long)",
     kQuantization},
    {"void tensorrt_llm::kernels::quantize_with_block_size<(tensorrt_llm::BlockScaleQuantization"
     "Type)2, __nv_bfloat16, 32, true>(int, int, int, int, __nv_bfloat16 const*, float const*, "
     "unsigned int*, unsigned int*, flashinfer::QuantizationSFLayout)",
     kQuantization},
    {"void fbgemm_gpu::(anonymous namespace)::_FP8rowwise_to_float_cuda_kernel<float>(unsigned "
     "char const*, int, int, float*, bool)",
     kQuantization},
    {"void vllm::dynamic_per_token_scaled_fp8_quant_kernel<c10::BFloat16, c10::Float8_e4m3fn>(c10::"
     "Float8_e4m3fn*, float*, c10::BFloat16 const*, float const*, int)",
     kQuantization},
    // TensorRT Myelin fusions, decided by the decoded ops
    {"__myl_AddCastMulMeanAddSqrtDivMulCastMul_0x9d4c7b1c23e2f8a5", kNormalization},
    {"__myl_ResTraConCasMeaSubMulMeaAddSqrDivMulCasMulAdd_myl2_1", kNormalization},
    {"__myl_CastMulAddMulCastCastMulCastMeanSubMul_0x1", kReduction},  // mean, no sqrt
    {"__myl_TraRes_0x197ff798c934e7e07cf4292e3634b96c", kCopyMemset},
    {"__myl_ResTra_0x804e2fd0410c92cd55b88f92db33aa74", kCopyMemset},
    {"__myl_ResTraCas_0x1234", kCopyMemset},
    {"__myl_Cast_myl9_2", kElementwise},
    {"__myl_MaxrSubExpSumDivMul_myl36_5", kReduction},
    {"__myl_Fc_myl2_3", kGemm},
    {"__myl_FcCast_myl0_6", kGemm},
    {"__myl_SiluMul_myl0_8", kElementwise},
    {"__myl_MulCastErfCastAddMulMulMulCast_0x2", kElementwise},
    {"__myl_MulMinMaxRounCast_myl3_1", kQuantization},
    {"__myl_Top_myl203_2", kReduction},
    {"__myl_CasResCasGatRes_myl203_3", kCopyMemset},
    {"__myl_Mov_myl296_5", kCopyMemset},
    // Triton (PyTorch Inductor) kernels
    {"triton_poi_fused_add_bitwise_and_bitwise_not_bitwise_or_ge_lt_mul_sub_0", kElementwise},
    {"triton_poi_fused__to_copy_1", kElementwise},
    {"triton_poi_fused_cat_clone_3", kCopyMemset},
    {"triton_poi_fused_embedding_0", kCopyMemset},
    {"triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_2", kNormalization},
    {"triton_per_fused_native_layer_norm_4", kNormalization},
    {"triton_red_fused__softmax_5", kReduction},
    {"triton_per_fused_sum_6", kReduction},
    {"triton_red_fused_argmax_7", kReduction},
    {"triton_tem_fused_mm_8", kGemm},
    {"triton_tem_fused_addmm_relu_9", kGemm},
    {"triton_tem_fused_flex_attention_0", kAttention},
    {"fused_add_mul_sigmoid_0", kElementwise},
    {"fused_moe_kernel", kGemm},
    // Nothing known
    {"void bounds_check_indices_kernel<long>(at::GenericPackedTensorAccessor<long, 1ul, "
     "at::RestrictPtrTraits, int>)",
     kOther},
    {"void cub::DeviceRadixSortOnesweepKernel<cub::DeviceRadixSortPolicy<long, float, "
     "int>::Policy800, false, long, float, int, int>(int*, int*, int*, int const*, long*, long "
     "const*, float*, float const*, int, int, int)",
     kOther},
    {"", kOther},
    // Whole-graph rows (nsys --cuda-graph-trace=graph, sightline record --cuda-graph-trace graph).
    {"CUDA graph 3 (whole graph)", kCudaGraph},
    {"CUDA graph kernel", kOther},
};

TEST(KernelCategory, RealWorldNames) {
  for (const Case& c : kCases) {
    EXPECT_STREQ(KernelCategoryName(ClassifyKernel(c.name)), KernelCategoryName(c.expected))
        << c.name;
  }
}

TEST(KernelCategory, NamesAreStable) {
  EXPECT_STREQ(KernelCategoryName(kGemm), "GEMM");
  EXPECT_STREQ(KernelCategoryName(kCopyMemset), "copy/memset");
  EXPECT_STREQ(KernelCategoryName(kCudaGraph), "CUDA graph");
  EXPECT_STREQ(KernelCategoryName(kOther), "other");
}

TEST(KernelCategory, DecodesMyelinOps) {
  std::vector<std::string_view> ops =
      DecodeMyelinOps("__myl_AddCastMulMeanAddSqrtDivMulCastMul_0x9d4c7b1c23e2f8a5");
  const std::vector<std::string_view> want = {"add",  "cast", "mul", "mean", "add",
                                              "sqrt", "div",  "mul", "cast", "mul"};
  EXPECT_EQ(ops, want);
  ops = DecodeMyelinOps("__myl_ResTraCasGatSliConMovRepQzx_myl1_0");
  const std::vector<std::string_view> want2 = {
      "reshape", "transpose", "cast",   "gather", "slice",
      "concat",  "copy",      "repeat", "Qzx"};  // unknown abbreviations stay as they are
  EXPECT_EQ(ops, want2);
  EXPECT_TRUE(DecodeMyelinOps("ampere_sgemm_128x64_nn").empty());
}

}  // namespace
}  // namespace sightline

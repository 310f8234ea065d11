// Tests for the rules that say what an allocation is for (importers/torch_snapshot/
// memory_purpose.h): one stack per rule family, the precedence (a graph capture encloses, the
// innermost named frame decides, a private pool is a graph's), and that the docs list every rule.
#include "importers/torch_snapshot/memory_purpose.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/files.h"

namespace sightline {
namespace {

constexpr std::string_view kSite = "/opt/torch/.venv/lib/python3.12/site-packages/";

// Frames innermost first, as a snapshot stores them; "file.py:name" for Python, "name" for C++.
struct Stack {
  std::vector<std::string> files, names;
  Stack& Py(std::string file, std::string name) {
    files.push_back(std::move(file));
    names.push_back(std::move(name));
    return *this;
  }
  Stack& Lib(std::string_view file, std::string name) {
    return Py(std::string(kSite) + std::string(file), std::move(name));
  }
  Stack& Cpp(std::string name) { return Py("??", std::move(name)); }
  MemoryPurpose Of(PoolHint pool = PoolHint::kUnknown) const {
    std::vector<StackFrame> f;
    for (size_t k = 0; k < files.size(); ++k) f.push_back({files[k], names[k]});
    return PurposeOfStack(f, pool);
  }
};

// The stacks of the H200 hf_generate.py snapshots (tests/data/torch_snapshot/hf_*), shortened.
Stack Alloc() {
  Stack s;
  s.Cpp("c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc()")
      .Cpp("at::_ops::empty_memory_format::call(c10::ArrayRef<c10::SymInt>)");
  return s;
}

TEST(MemoryPurpose, WeightsFromBuildingConvertingOrLoading) {
  // Built on the GPU (torch.device("cuda")): nn.Embedding's __init__ under the model's.
  EXPECT_EQ(Alloc()
                .Lib("torch/utils/_device.py", "__torch_function__")
                .Lib("torch/nn/modules/sparse.py", "__init__")
                .Lib("transformers/models/llama/modeling_llama.py", "__init__")
                .Py("/app/hf_generate.py", "main")
                .Of(),
            MemoryPurpose::kWeights);
  // model.to(torch.bfloat16): Module._apply's convert.
  EXPECT_EQ(Alloc()
                .Lib("torch/nn/modules/module.py", "convert")
                .Lib("torch/nn/modules/module.py", "_apply")
                .Lib("transformers/modeling_utils.py", "to")
                .Py("/app/hf_generate.py", "main")
                .Of(),
            MemoryPurpose::kWeights);
  // A model's own module making its parameter (LlamaRMSNorm: torch.ones under torch.device).
  EXPECT_EQ(Alloc()
                .Lib("torch/utils/_device.py", "__torch_function__")
                .Lib("transformers/models/llama/modeling_llama.py", "__init__")
                .Py("/app/hf_generate.py", "main")
                .Of(),
            MemoryPurpose::kWeights);
  EXPECT_EQ(Alloc().Lib("safetensors/torch.py", "load_file").Py("/app/serve.py", "main").Of(),
            MemoryPurpose::kWeights);
  EXPECT_EQ(Alloc()
                .Lib("vllm/model_executor/layers/linear.py", "create_weights")
                .Lib("vllm/model_executor/model_loader/base_loader.py", "load_model")
                .Of(),
            MemoryPurpose::kWeights);
  EXPECT_EQ(Alloc().Py("/app/model.py", "load_weights").Of(), MemoryPurpose::kWeights);
}

TEST(MemoryPurpose, KvCacheInnermostEvenInsideAForward) {
  // transformers' static cache, made lazily in the first forward's attention.
  EXPECT_EQ(Alloc()
                .Lib("transformers/cache_utils.py", "lazy_initialization")
                .Lib("transformers/cache_utils.py", "update")
                .Lib("transformers/models/llama/modeling_llama.py", "forward")
                .Lib("torch/nn/modules/module.py", "_call_impl")
                .Of(),
            MemoryPurpose::kKvCache);
  EXPECT_EQ(Alloc()
                .Lib("vllm/v1/worker/gpu_model_runner.py", "_allocate_kv_cache_tensors")
                .Lib("vllm/v1/worker/gpu_model_runner.py", "initialize_kv_cache")
                .Of(),
            MemoryPurpose::kKvCache);
  EXPECT_EQ(Alloc().Lib("sglang/srt/mem_cache/memory_pool.py", "_create_buffers").Of(),
            MemoryPurpose::kKvCache);
}

TEST(MemoryPurpose, ActivationsAndWorkspace) {
  EXPECT_EQ(Alloc()
                .Lib("transformers/models/llama/modeling_llama.py", "forward")
                .Lib("torch/nn/modules/module.py", "_call_impl")
                .Lib("transformers/generation/utils.py", "_sample")
                .Of(),
            MemoryPurpose::kActivations);
  // cuBLAS's workspace, allocated by the first matmul on a stream (C++ frames only name it).
  Stack ws;
  ws.Cpp("c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate(unsigned long)")
      .Cpp("at::cuda::setWorkspaceForHandle(cublasContext*, c10::cuda::CUDAStream)")
      .Cpp("at::cuda::getCurrentCUDABlasHandle()")
      .Lib("transformers/generation/utils.py", "_sample");
  EXPECT_EQ(ws.Of(), MemoryPurpose::kActivations);
}

TEST(MemoryPurpose, GraphCaptureEnclosesAndPrivatePoolsAreGraphs) {
  Stack captured = Alloc();
  captured.Py("/tmp/torchinductor_user/yy/cyy.py", "partition_0")
      .Lib("torch/_inductor/cudagraph_trees.py", "_record")
      .Lib("torch/_inductor/cudagraph_trees.py", "run")
      .Lib("transformers/models/llama/modeling_llama.py", "forward");
  EXPECT_EQ(captured.Of(), MemoryPurpose::kCudaGraphPool);  // the pool is unknown: frames say
  // The dump says the block lies in the default pool: capture frames do not make it the graph's
  // (the generated code's frame is a forward's work).
  EXPECT_EQ(captured.Of(PoolHint::kDefault), MemoryPurpose::kActivations);
  // In a private pool: the graph's, unless it holds weights or a KV cache (a MemPool).
  EXPECT_EQ(Alloc().Py("/app/x.py", "main").Of(PoolHint::kPrivate), MemoryPurpose::kCudaGraphPool);
  EXPECT_EQ(Alloc().Of(PoolHint::kPrivate), MemoryPurpose::kCudaGraphPool);
  EXPECT_EQ(Alloc()
                .Lib("vllm/v1/worker/gpu_model_runner.py", "initialize_kv_cache")
                .Of(PoolHint::kPrivate),
            MemoryPurpose::kKvCache);
  EXPECT_EQ(Alloc()
                .Lib("transformers/generation/utils.py", "_sample")
                .Lib("vllm/v1/worker/gpu_model_runner.py", "capture_model")
                .Of(),
            MemoryPurpose::kCudaGraphPool);
}

TEST(MemoryPurpose, OtherAndUnknown) {
  EXPECT_EQ(Alloc()
                .Lib("transformers/generation/logits_process.py", "__call__")
                .Py("/app/hf_generate.py", "main")
                .Of(),
            MemoryPurpose::kOther);
  EXPECT_EQ(Alloc().Of(), MemoryPurpose::kOther);    // C++ frames that name nothing
  EXPECT_EQ(Stack{}.Of(), MemoryPurpose::kUnknown);  // no stack recorded
}

TEST(MemoryPurpose, TorchFilesAreTorchsOnly) {
  EXPECT_TRUE(IsTorchPythonFile(std::string(kSite) + "torch/nn/modules/module.py"));
  // A virtual environment under /opt/torch/ does not make transformers PyTorch's own.
  EXPECT_FALSE(IsTorchPythonFile(std::string(kSite) + "transformers/modeling_utils.py"));
  EXPECT_TRUE(IsTorchPythonFile("/usr/lib/python3/dist-packages/torch/_tensor.py"));
  EXPECT_TRUE(IsTorchPythonFile("/home/dev/pytorch/torch/nn/functional.py"));  // a source tree
  EXPECT_FALSE(IsTorchPythonFile("/app/hf_generate.py"));
}

// The table is documented: docs/analyses/memory.md names every rule's file part and names.
TEST(MemoryPurpose, EveryRuleIsDocumented) {
  const std::string doc =
      testing::Slurp(std::string(SIGHTLINE_SOURCE_DIR) + "/docs/analyses/memory.md");
  ASSERT_FALSE(doc.empty());
  for (const PurposeRule& r : PurposeRules()) {
    if (!r.file.empty()) {
      EXPECT_NE(doc.find(std::string(r.file)), std::string::npos) << r.file;
    }
    std::string_view names = r.names;
    while (!names.empty()) {
      const size_t bar = names.find('|');
      const std::string one(names.substr(0, bar));
      EXPECT_NE(doc.find("`" + one + "`"), std::string::npos) << one;
      if (bar == std::string_view::npos) break;
      names.remove_prefix(bar + 1);
    }
  }
}

}  // namespace
}  // namespace sightline

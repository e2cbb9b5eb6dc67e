#include <isaac/ir/pattern.hpp>

namespace isaac::ir {

namespace {

Access plain_access(std::string tensor, const std::vector<std::string>& indices) {
  Access a{std::move(tensor), {}};
  for (const std::string& index : indices) a.coordinates.push_back(index_coordinate(index));
  return a;
}

Tensor bound_tensor(std::string name, DType dtype, std::vector<std::int64_t> shape, std::vector<std::int64_t> strides,
                    int align) {
  Tensor t;
  t.name = std::move(name);
  t.dtype = dtype;
  t.rank = static_cast<int>(shape.size());
  t.shape = std::move(shape);
  t.strides = std::move(strides);
  t.align = align;
  return t;
}

// alpha * sum(reduction, x * y) + beta * out
Contraction linear_contraction(Access out, std::vector<std::string> reduction, Access x, Access y,
                               std::vector<Tensor> tensors) {
  Expr body = mul(access(std::move(x)), access(std::move(y)));
  Expr right = add(mul(scalar("alpha"), sum(std::move(reduction), std::move(body))), mul(scalar("beta"), access(out)));
  return make_contraction(std::move(out), std::move(right), std::move(tensors));
}

}  // namespace

Contraction gemm_contraction(const Gemm& g) {
  const bool batched = g.batch > 1;
  auto with_batch = [&](std::vector<std::int64_t> values, std::int64_t batch_value) {
    if (batched) values.insert(values.begin(), batch_value);
    return values;
  };
  auto indices = [&](std::vector<std::string> names) {
    if (batched) names.insert(names.begin(), "b");
    return names;
  };
  std::vector<Tensor> tensors{
      bound_tensor("C", g.dtype, with_batch({g.m, g.n}, g.batch), with_batch({1, g.ldc}, g.stride_c), g.align_c),
      bound_tensor("A", g.dtype, with_batch({g.m, g.k}, g.batch),
                   with_batch(g.a_trans ? std::vector<std::int64_t>{g.lda, 1} : std::vector<std::int64_t>{1, g.lda},
                              g.stride_a),
                   g.align_a),
      bound_tensor("B", g.dtype, with_batch({g.k, g.n}, g.batch),
                   with_batch(g.b_trans ? std::vector<std::int64_t>{g.ldb, 1} : std::vector<std::int64_t>{1, g.ldb},
                              g.stride_b),
                   g.align_b)};
  return linear_contraction(plain_access("C", indices({"m", "n"})), {"k"}, plain_access("A", indices({"m", "k"})),
                            plain_access("B", indices({"k", "n"})), std::move(tensors));
}

Contraction conv_contraction(const Conv& conv) {
  auto vec = [](const std::array<std::int64_t, 4>& a) { return std::vector<std::int64_t>(a.begin(), a.end()); };
  std::vector<Tensor> tensors{
      bound_tensor("O", conv.dtype, {conv.n, conv.k, conv.p, conv.q}, vec(conv.output_strides), conv.align_output),
      bound_tensor("I", conv.dtype, {conv.n, conv.c, conv.h, conv.w}, vec(conv.input_strides), conv.align_input),
      bound_tensor("F", conv.dtype, {conv.k, conv.c, conv.r, conv.s}, vec(conv.filter_strides), conv.align_filter)};
  Access in{"I",
            {index_coordinate("n"), index_coordinate("c"),
             conv.stride_h * index_coordinate("p") + conv.dilation_h * index_coordinate("r") -
                 constant_coordinate(conv.pad_h),
             conv.stride_w * index_coordinate("q") + conv.dilation_w * index_coordinate("s") -
                 constant_coordinate(conv.pad_w)}};
  return linear_contraction(plain_access("O", {"n", "k", "p", "q"}), {"c", "r", "s"}, std::move(in),
                            plain_access("F", {"k", "c", "r", "s"}), std::move(tensors));
}

}  // namespace isaac::ir

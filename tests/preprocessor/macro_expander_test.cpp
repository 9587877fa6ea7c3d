#include <gtest/gtest.h>

#include "preprocessor/macro_expander.h"

namespace lexpack::preprocessor {
namespace {

class FakeHooks : public ExpansionHooks {
 public:
  BuiltinKind builtin_kind(std::string_view name) const override {
    if (name == "__has_include" || name == "__has_include_next") return BuiltinKind::kHasInclude;
    if (name == "__has_builtin") return BuiltinKind::kQuery;
    if (name == "__LINE__" || name == "__COUNTER__") return BuiltinKind::kObject;
    return BuiltinKind::kNone;
  }
  std::optional<std::string> builtin_value(std::string_view name) override {
    if (name == "__LINE__") return "7";
    return std::nullopt;
  }
  std::optional<intmax_t> builtin_query(std::string_view, std::string_view arg) override {
    if (arg == "known") return 1;
    return std::nullopt;
  }
  bool has_include(std::string_view name, bool angled, bool next) override {
    asked.push_back(std::string(angled ? "<" : "\"") + std::string(name) + (next ? " next" : ""));
    return name == "yes.h";
  }
  std::vector<std::string> asked;
};

class Expand : public ::testing::Test {
 protected:
  void def(std::string_view text) {
    std::string err;
    std::optional<Macro> m = parse_definition(text, &err);
    ASSERT_TRUE(m) << text << ": " << err;
    table.define(std::move(*m));
  }
  std::string run(std::string_view text, MacroExpander::Mode mode = MacroExpander::Mode::kPlain) {
    Tokens in, out;
    tokenize(text, &in);
    MacroExpander x(table, hide_sets, hooks);
    if (!x.expand(std::move(in), mode, &out)) return "error: " + x.error();
    return spell(out.data(), out.data() + out.size());
  }
  std::string cond(std::string_view text) { return run(text, MacroExpander::Mode::kCondition); }

  MacroTable table;
  HideSets hide_sets;
  FakeHooks hooks;
};

TEST_F(Expand, ObjectAndFunctionLike) {
  def("A 1 + B");
  def("B 2");
  def("F(x, y) (x * y)");
  EXPECT_EQ(run("A"), "1 + 2");
  EXPECT_EQ(run("F(A, 3)"), "(1 + 2 * 3)");
  EXPECT_EQ(run("F"), "F");
  EXPECT_EQ(run("F (1,(2,3))"), "(1 * (2,3))");
}

TEST_F(Expand, RecursionIsBlocked) {
  def("X X + Y");
  def("Y X");
  def("f(a) a + f(a)");
  EXPECT_EQ(run("X"), "X + X");
  EXPECT_EQ(run("f(f(1))"), "1 + f(1) + f(1 + f(1))");
  // The standard's example: f(2)(9) rescans g with the tokens after it.
  def("g(a) a*h");
  def("h(a) g(a)");
  EXPECT_EQ(run("g(2)(9)"), "2*9*h");
}

TEST_F(Expand, StringizeAndPaste) {
  def("S(x) #x");
  def("CAT(a, b) a ## b");
  def("XCAT(a, b) CAT(a, b)");
  def("ONE 1");
  EXPECT_EQ(run("S( a  \"q\\n\"  'c' )"), "\"a \\\"q\\\\n\\\" 'c'\"");
  EXPECT_EQ(run("CAT(ONE, 2)"), "ONE2");
  EXPECT_EQ(run("XCAT(ONE, 2)"), "12");
  EXPECT_EQ(run("CAT(,)"), "");
  EXPECT_EQ(run("CAT(x,)"), "x");
  EXPECT_EQ(run("CAT(<, =)"), "<=");
  EXPECT_EQ(run("CAT(., a)").rfind("error: pasting", 0), 0u);
}

TEST_F(Expand, HeaderNameFromPaste) {
  def("CAT(a, b) a ## b");
  def("XCAT(a, b) CAT(a, b)");
  def("HDR(n) <XCAT(n, _impl).h>");
  EXPECT_EQ(run("HDR(cfg)"), "<cfg_impl.h>");
}

TEST_F(Expand, VariadicAndVaOpt) {
  def("V(f, ...) f(__VA_ARGS__)");
  def("O(a, ...) a __VA_OPT__(, __VA_ARGS__) end");
  def("G(fmt, args...) fmt , ## args");
  def("E");
  EXPECT_EQ(run("V(g, 1, 2)"), "g(1, 2)");
  EXPECT_EQ(run("V(g)"), "g()");
  EXPECT_EQ(run("O(x)"), "x end");
  EXPECT_EQ(run("O(x, 1, 2)"), "x , 1, 2 end");
  EXPECT_EQ(run("G(x)"), "x");
  EXPECT_EQ(run("G(x, 1)"), "x , 1");
}

TEST_F(Expand, EmptyArguments) {
  def("F(a, b) [a|b]");
  def("Z() z");
  EXPECT_EQ(run("F(,)"), "[|]");
  EXPECT_EQ(run("F( , 2)"), "[|2]");
  EXPECT_EQ(run("Z()"), "z");
  EXPECT_EQ(run("F(1)").rfind("error: macro \"F\" passed 1 arguments", 0), 0u);
  EXPECT_EQ(run("F(1, 2").rfind("error: unterminated", 0), 0u);
}

TEST_F(Expand, DefinedInConditions) {
  def("A");
  def("IS_A defined(A)");
  def("IS(x) defined x");
  EXPECT_EQ(cond("defined A + defined(B)"), "1 + 0");
  EXPECT_EQ(cond("IS_A"), "1");
  EXPECT_EQ(cond("IS(B)"), "0");
  // The argument is expanded first: `defined` is left without a name.
  EXPECT_EQ(cond("IS(A)").rfind("error: operator \"defined\"", 0), 0u);
  EXPECT_EQ(cond("defined __has_include && defined __LINE__"), "1 && 1");
  EXPECT_EQ(run("defined A"), "defined");
}

TEST_F(Expand, HasIncludeEveryWay) {
  def("HAS __has_include");
  def("HAS2 HAS");
  def("W(x) __has_include(x)");
  def("CAT(a, b) a ## b");
  def("H <yes.h>");
  EXPECT_EQ(cond("__has_include(<yes.h>) + __has_include(\"no.h\")"), "1 + 0");
  EXPECT_EQ(cond("HAS(<yes.h>)"), "1");
  EXPECT_EQ(cond("HAS2(\"yes.h\")"), "1");
  EXPECT_EQ(cond("W(<yes.h>)"), "1");
  EXPECT_EQ(cond("CAT(__has_, include)(<no.h>)"), "0");
  EXPECT_EQ(cond("__has_include(H)"), "1");
  EXPECT_EQ(cond("__has_include_next(<yes.h>)"), "1");
  EXPECT_EQ(hooks.asked, (std::vector<std::string>{"<yes.h", "\"no.h", "<yes.h", "\"yes.h",
                                                   "<yes.h", "<no.h", "<yes.h", "<yes.h next"}));
}

TEST_F(Expand, Builtins) {
  EXPECT_EQ(cond("__has_builtin(known) + __LINE__"), "1 + 7");
  Tokens in, out;
  tokenize("__has_builtin(other) || __COUNTER__", &in);
  MacroExpander x(table, hide_sets, hooks);
  ASSERT_TRUE(x.expand(std::move(in), MacroExpander::Mode::kCondition, &out));
  EXPECT_TRUE(x.unknown_builtin());
  EXPECT_EQ(out[0].kind, TokenKind::kUnknown);
  EXPECT_EQ(out[2].kind, TokenKind::kCounter);  // counted: see below
}

TEST_F(Expand, CounterExpansionsAreNumberedInLineOrder) {
  def("C __COUNTER__");
  def("ID(x) x");
  def("ZERO() 0");
  // "k": the k-th expansion; "?": unknown.
  auto counters = [&](std::string_view text) {
    Tokens in, out;
    tokenize(text, &in);
    MacroExpander x(table, hide_sets, hooks);
    if (!x.expand(std::move(in), MacroExpander::Mode::kCondition, &out)) return x.error();
    std::string s;
    for (const Token& t : out) {
      if (t.kind == TokenKind::kCounter) s += std::to_string(t.counter) + " ";
      if (t.kind == TokenKind::kUnknown) s += "? ";
    }
    return s;
  };
  EXPECT_EQ(counters("__COUNTER__ + 1 == __COUNTER__ + 0"), "0 1 ");
  EXPECT_EQ(counters("C - C == __COUNTER__ + ZERO()"), "0 1 2 ");
  // In an argument a compiler expands it before the body (or to decide
  // __VA_OPT__): from there on, unknown.
  EXPECT_EQ(counters("__COUNTER__ == ID(__COUNTER__) + __COUNTER__"), "0 ? ? ");
  EXPECT_EQ(counters("__COUNTER__ + ID(C) == __COUNTER__"), "0 ? ? ");
  EXPECT_EQ(counters("__COUNTER__ + ID(1) == __COUNTER__"), "0 1 ");
  EXPECT_EQ(counters("__COUNTER__ + ID(other) == __COUNTER__"), "0 ? ");
  // Each directive counts from its own start.
  EXPECT_EQ(counters("__COUNTER__"), "0 ");
  EXPECT_EQ(run("__COUNTER__"), "error: unsupported builtin macro __COUNTER__");
}

TEST_F(Expand, UncertainNamesAreReported) {
  def("A 1");
  table.set_uncertain("B", true);
  Tokens in, out;
  MacroExpander x(table, hide_sets, hooks);
  tokenize("A", &in);
  ASSERT_TRUE(x.expand(in, MacroExpander::Mode::kCondition, &out));
  EXPECT_FALSE(x.read_uncertain());
  in.clear();
  tokenize("defined(B)", &in);
  ASSERT_TRUE(x.expand(in, MacroExpander::Mode::kCondition, &out));
  EXPECT_TRUE(x.read_uncertain());
}

TEST(MacroDefinition, ParsesCommandAndDirectiveForms) {
  std::string err;
  std::optional<Macro> m = parse_command_definition("F(a,b)=a+b", &err);
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->function_like);
  EXPECT_EQ(m->params, (std::vector<std::string>{"a", "b"}));
  m = parse_command_definition("X", &err);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->body.at(0).text, "1");
  m = parse_define_directive("# define /* c */ G/**/(x) x \\\n + 1 // tail", &err);
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->function_like);  // a comment before '(' makes it object-like
  EXPECT_EQ(spell(m->body.data(), m->body.data() + m->body.size()), "(x) x + 1");
  m = parse_define_directive("#define V(a, ...) __VA_ARGS__", &err);
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->variadic);
  EXPECT_FALSE(parse_define_directive("#define F(x) #y", &err));
  EXPECT_FALSE(parse_define_directive("#define F ## x", &err));
  EXPECT_FALSE(parse_define_directive("#define F(x, x) x", &err));
}

}  // namespace
}  // namespace lexpack::preprocessor

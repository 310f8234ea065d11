// The one function every string of a redacted copy goes through (exporters/redactor.h): what it
// learns, what it rewrites, and what it keeps.
#include "exporters/redactor.h"

#include <gtest/gtest.h>

namespace sightline {
namespace {

TEST(Redactor, CommandLineSecretsInBothForms) {
  Redactor r;
  r.AddCommandLine({"serve.py", "--api-key", "sk-live-0123456789", "--hf-token=hf_AbCdEf99",
                    "--max-tokens", "4096", "--apiKey", "xyz"});
  // The arguments themselves (nsys keeps one per row) and anywhere else they appear.
  EXPECT_EQ(r.Redact("sk-live-0123456789"), "<redacted>");
  EXPECT_EQ(r.Redact("--hf-token=hf_AbCdEf99"), "--hf-token=<redacted>");
  EXPECT_EQ(r.Redact("xyz"), "<redacted>");  // short: only as a whole string
  EXPECT_EQ(r.Redact("launched: serve.py --api-key SK-LIVE-0123456789 --max-tokens 4096"),
            "launched: serve.py --api-key <redacted> --max-tokens 4096");
  EXPECT_EQ(r.Redact("HF_AbCdEf99 in a JSON {\"t\":\"hf_abcdef99\"}"),
            "<redacted> in a JSON {\"t\":\"<redacted>\"}");
  // A number after a secret-like name is a setting: it stays where it is not written after the
  // name.
  Redactor budget;
  budget.AddCommandLine({"--token-budget", "512", "--key-size=2048"});
  EXPECT_EQ(budget.Redact("512"), "512");
  EXPECT_EQ(budget.Redact("gemm_2048"), "gemm_2048");
  EXPECT_EQ(budget.Redact("--key-size=2048"), "--key-size=<redacted>");
  // --max-tokens suggests no secret: its value stays everywhere.
  EXPECT_EQ(r.Redact("4096"), "4096");
  EXPECT_EQ(r.Redact("gemm_4096x4096"), "gemm_4096x4096");
  // An option never learned is still recognised by its name.
  EXPECT_EQ(r.Redact("run --password hunter2 --db-passwd=abc"),
            "run --password <redacted> --db-passwd=<redacted>");
}

TEST(Redactor, SecretNames) {
  for (const char* name : {"api-key", "HF_TOKEN", "hfToken", "AWS_SECRET_ACCESS_KEY", "password",
                           "db_passwd", "auth", "credentials", "session-cookie", "OPENAI_APIKEY"}) {
    EXPECT_TRUE(IsSecretName(name)) << name;
  }
  for (const char* name : {"max-tokens", "PHASE", "monkey", "author", "keys", "PWD"}) {
    EXPECT_FALSE(IsSecretName(name)) << name;
  }
}

TEST(Redactor, EnvironmentInAnyCaseWithExportOrBlanks) {
  Redactor r;
  EXPECT_EQ(r.AddEnvironmentList("http_proxy=http://proxyuser:pr0xyPass@proxy.corp:3128;"
                                 "export WANDB_API_KEY=wandbsecret0123\n"
                                 " SPECIAL_SETTING='verysecretvalue42';PATH=/usr/bin:/bin;X=1"),
            5);
  // Where the variable is written, its value goes (NAME= stays) whatever the form.
  EXPECT_EQ(r.Redact("http_proxy=http://proxyuser:pr0xyPass@proxy.corp:3128"), "http_proxy=");
  EXPECT_EQ(r.Redact("HTTP_PROXY=http://other:pw@proxy:1"), "HTTP_PROXY=");
  EXPECT_EQ(r.Redact("export WANDB_API_KEY=wandbsecret0123"), "export WANDB_API_KEY=");
  EXPECT_EQ(r.Redact(" SPECIAL_SETTING='verysecretvalue42'"), " SPECIAL_SETTING=");
  // Elsewhere, the distinctive values are searched; a system path is not.
  EXPECT_EQ(r.Redact("saw VerySecretValue42 in a log"), "saw <redacted> in a log");
  EXPECT_EQ(r.Redact("{\"k\": \"wandbsecret0123\"}"), "{\"k\": \"<redacted>\"}");
  EXPECT_EQ(r.Redact("/usr/bin:/bin"), "/usr/bin:/bin");
  // Credentials in a URL, learned or not.
  EXPECT_EQ(r.Redact("pip from https://bob:tok3n@pypi.corp/simple"),
            "pip from https://<redacted>@pypi.corp/simple");
  EXPECT_EQ(r.Redact("GET https://hub/x?token=abc123&page=2"), "GET https://hub/x?token=&page=2");
}

TEST(Redactor, NameValueStringsThatAreNoVariableStay) {
  Redactor r;
  r.AddEnvironment("HOME=/home/alice");
  for (const char* name : {"PHASE=prefill", "PHASE=decode", "layer=3", "BATCH=64 SEQ=2048"}) {
    EXPECT_EQ(r.Redact(name), name);
  }
  EXPECT_EQ(r.Redact("HOME=/somewhere else"), "HOME= else");
}

TEST(Redactor, HostInAnyCaseWithItsDomain) {
  Redactor r;
  r.AddHost("gpu-node-17.Cluster.Example.org");
  const std::string pseudonym = HostPseudonym("gpu-node-17");
  EXPECT_EQ(pseudonym, HostPseudonym("GPU-NODE-17.cluster.example.org"));
  EXPECT_EQ(r.Redact("GPU-NODE-17"), pseudonym);
  EXPECT_EQ(r.Redact("gpu-node-17.cluster.example.org"), pseudonym);
  EXPECT_EQ(r.Redact("ssh Gpu-Node-17.CLUSTER.EXAMPLE.ORG"), "ssh " + pseudonym);
  EXPECT_EQ(r.Redact("mail bob@example.org, cluster.example.org"),
            "mail bob@domain.invalid, domain.invalid");
  // A pseudonym is not learned again: redacting a copy again keeps it.
  Redactor again;
  again.AddHost(pseudonym);
  EXPECT_EQ(again.Redact(pseudonym), pseudonym);
  // A one-word domain identifies nobody and would rewrite every "/home/".
  Redactor lan;
  lan.AddHost("box7.home");
  EXPECT_EQ(lan.Redact("/home/x box7"), "/home/user " + HostPseudonym("box7"));
}

TEST(Redactor, UserInPathsPayloadsAndText) {
  Redactor r;
  r.LearnPaths("/home/Zelda_Q/proj/run.py");
  EXPECT_EQ(r.Redact("/home/zelda_q/x:/scratch/someone/y:C:\\Users\\ZELDA_Q\\AppData"),
            "/home/user/x:/scratch/user/y:C:\\Users\\user\\AppData");
  EXPECT_EQ(r.Redact("{\"file\":\"C:\\\\Users\\\\zelda_q\\\\a.py\",\"by\":\"zelda_q\"}"),
            "{\"file\":\"C:\\\\Users\\\\user\\\\a.py\",\"by\":\"user\"}");
  EXPECT_EQ(r.Redact("zelda_q_train (pid 4)"), "user_train (pid 4)");
  // Learned from C:\Users\ too, but not from /scratch/ (as often a project as a user).
  Redactor w;
  w.LearnPaths("C:\\\\Users\\\\kenji\\\\x /scratch/datasets/imagenet");
  EXPECT_EQ(w.Redact("kenji"), "user");
  EXPECT_EQ(w.Redact("load datasets"), "load datasets");
  // Names that identify nobody are kept.
  Redactor root;
  root.LearnPaths("/home/root/x /Users/Shared/y");
  EXPECT_EQ(root.Redact("root"), "root");
  // A short name matches whole words only.
  Redactor bob;
  bob.AddUser("bob");
  EXPECT_EQ(bob.Redact("bob ran bobcat_kernel"), "user ran bobcat_kernel");
}

TEST(Redactor, FindNamesWhatItFoundNeverTheValue) {
  Redactor r;
  r.AddUser("zelda_q");
  r.AddEnvironment("HF_TOKEN=hf_SECRETSECRET");
  const std::vector<int> found = r.Find("ZELDA_Q wrote hf_secretsecret");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(r.What(found[0]), "the user name");
  EXPECT_EQ(r.What(found[1]), "the value of environment variable HF_TOKEN");
  EXPECT_TRUE(r.Find(r.Redact("ZELDA_Q wrote hf_secretsecret")).empty());
  EXPECT_TRUE(r.Find("zelda_q", /*min_length=*/8).empty());
}

TEST(Redactor, PathsLoseTheirUser) {
  bool changed = false;
  EXPECT_EQ(RedactUserPaths("/home/alice/x.py:/Users/bob/y", &changed),
            "/home/user/x.py:/Users/user/y");
  EXPECT_TRUE(changed);
  changed = false;
  EXPECT_EQ(RedactUserPaths("/usr/lib/home/", &changed), "/usr/lib/home/");
  EXPECT_FALSE(changed);
  EXPECT_EQ(HostPseudonym("node1"), HostPseudonym("node1"));
  EXPECT_NE(HostPseudonym("node1"), HostPseudonym("node2"));
}

}  // namespace
}  // namespace sightline
